// Package combinetest checks an index's read delegation and write
// combining (package combine) on one hot key, the same way for every
// index that uses the local lock table.
package combinetest

import (
	"encoding/binary"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/combine"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
)

// Clients is how many clients of one compute node HotKey runs on the key.
const Clients = 100

// Index is an index whose compute nodes combine.
type Index interface {
	NewClient(transport.Endpoint) indexes.Client
	indexes.Combiner
}

// HotKey builds an index on a simulated fabric of two compute nodes with
// build, which also loads it, sets hot to 0, then has Clients clients of
// the first compute node update hot with distinct values at the same
// time and search it. It checks that write combining ran at most one
// remote update per ten writers, that read delegation served 2 to 9
// searches a round (a winner and at most combine.ReadWindow queued
// behind it), and that the history of updates and searches is
// linearizable; it returns the verbs the updates and searches issued,
// for the caller's own bound.
func HotKey(t *testing.T, build func(*sim.Fabric) Index, hot []byte) uint64 {
	t.Helper()
	cfg := transport.Config{ComputeNodes: 2, MemoryNodes: 1, Threads: 25, MemoryCores: 1, ComputeCores: 25, MemoryBytes: 64 << 20}
	f := indextest.SimFabric(t, cfg, sim.CX6)
	x := build(f)
	me := cfg.ComputeNodeIDs()[0]
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
	hist := make([]combine.RegisterOp, 2*Clients)
	for i := range Clients {
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
		t.Errorf("updates and searches of one key by %d clients are not linearizable: %v", Clients, err)
	}
	reads, writes := x.CombiningSizes()
	wOps, wRounds := writes.Ops()-writes0.Ops(), writes.Rounds()-writes0.Rounds()
	rOps, rRounds := reads.Ops()-reads0.Ops(), reads.Rounds()-reads0.Rounds()
	if wOps != Clients || wRounds > Clients/10 {
		t.Errorf("write combining: %d updates in %d rounds; want %d in at most %d", wOps, wRounds, Clients, Clients/10)
	}
	if rOps <= rRounds || rOps-rRounds > combine.ReadWindow*rRounds {
		t.Errorf("read delegation: %d searches in %d rounds; want 2 to %d a round", rOps, rRounds, combine.ReadWindow+1)
	}
	st := f.Stats()
	verbs := st.Verbs.Total().Verbs()
	t.Logf("%d clients: %d verbs; write rounds %d (max %d); read rounds %d (max %d)",
		Clients, verbs, wRounds, writes.Max(), rRounds, reads.Max())
	return verbs
}
