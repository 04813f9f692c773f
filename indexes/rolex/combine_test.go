package rolex

import (
	"encoding/binary"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/combine"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
)

// 100 clients of one compute node update one key at the same time, then
// search it: with combine=true write combining runs far fewer remote
// updates than there are writers, read delegation fewer searches than
// readers, and the history is linearizable.
func TestCombiningHotKey(t *testing.T) {
	const clients = 100
	cfg := transport.Config{ComputeNodes: 2, MemoryNodes: 1, Threads: 25, MemoryCores: 1, ComputeCores: 25, MemoryBytes: 64 << 20}
	f, err := sim.New(cfg, sim.CX6)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	x := indextest.Build(t, "rolex", indexes.Env{Fabric: f, KeySize: 8, ValueSize: 8, CacheBytes: 4 << 20},
		map[string]string{"span": "8", "error": "8", "maskedcas": "false", "combine": "true"}).(*Rolex)
	if err := x.BulkLoad(f.Setup(1), load(1000)); err != nil {
		t.Fatal(err)
	}
	hot := key(500)
	me := transport.NodeID(1)
	f.Go(me, 0, func(ep transport.Endpoint) {
		if err := x.NewClient(ep).Update(hot, binary.BigEndian.AppendUint64(nil, 0)); err != nil {
			t.Error(err)
		}
	})
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
	f.ResetStats()
	reads0, writes0 := x.CombiningSizes()
	hist := make([]combine.RegisterOp, 2*clients)
	for i := range clients {
		f.Go(me, i%cfg.Threads, func(ep transport.Endpoint) {
			c := x.NewClient(ep)
			v := uint64(i + 1)
			call := ep.Now()
			if err := c.Update(hot, binary.BigEndian.AppendUint64(nil, v)); err != nil {
				t.Error(err)
			}
			hist[2*i] = combine.RegisterOp{Write: true, Val: v, Call: call, Return: ep.Now()}
			call = ep.Now()
			got, ok, err := c.Search(hot)
			if err != nil || !ok {
				t.Errorf("search after update: %v, %v", ok, err)
				return
			}
			hist[2*i+1] = combine.RegisterOp{Val: binary.BigEndian.Uint64(got), Call: call, Return: ep.Now()}
		})
	}
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
	// Virtual-time stamps: an operation returning at the instant another
	// is called may be ordered either way.
	for i := range hist {
		hist[i].Call *= 2
		hist[i].Return = hist[i].Return*2 + 1
	}
	if err := combine.CheckRegister(hist); err != nil {
		t.Errorf("updates and searches of one key by %d clients are not linearizable: %v", clients, err)
	}
	reads, writes := x.CombiningSizes()
	wOps, wRounds := writes.Ops()-writes0.Ops(), writes.Rounds()-writes0.Rounds()
	rOps, rRounds := reads.Ops()-reads0.Ops(), reads.Rounds()-reads0.Rounds()
	if wOps != clients || wRounds > clients/10 {
		t.Errorf("write combining: %d updates in %d rounds; want %d in at most %d", wOps, wRounds, clients, clients/10)
	}
	if rOps <= rRounds || rOps-rRounds > 8*rRounds {
		t.Errorf("read delegation: %d searches in %d rounds; want 2 to 9 a round", rOps, rRounds)
	}
	st := f.Stats()
	t.Logf("%d clients: %d verbs; write rounds %d (max %d); read rounds %d (max %d)",
		clients, st.Verbs.Total().Verbs(), wRounds, writes.Max(), rRounds, reads.Max())
}
