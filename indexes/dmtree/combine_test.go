package dmtree

import (
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/combine"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
)

// hotOp is one operation on the hot key: an update (write) or a search,
// with the value written or returned.
type hotOp struct {
	write bool
	val   uint64
}

// registerModel is one key holding a value: a search returns the last
// value written.
var registerModel = porcupine.Model{
	Init: func() any { return uint64(0) },
	Step: func(state, input, _ any) (bool, any) {
		s, op := state.(uint64), input.(hotOp)
		if op.write {
			return true, op.val
		}
		return op.val == s, s
	},
	DescribeOperation: func(input, _ any) string {
		op := input.(hotOp)
		if op.write {
			return fmt.Sprintf("update %d", op.val)
		}
		return fmt.Sprintf("search = %d", op.val)
	},
}

// 100 clients of one compute node update one key at the same time, then
// search it: write combining runs far fewer remote updates than there are
// writers, read delegation far fewer searches than readers, and the
// history of updates and searches is linearizable (porcupine).
func TestCombiningHotKey(t *testing.T) {
	const clients = 100
	cfg := transport.Config{ComputeNodes: 2, MemoryNodes: 1, Threads: 25, MemoryCores: 1, ComputeCores: 25, MemoryBytes: 256 << 20}
	f := indextest.SimFabric(t, cfg, sim.CX6)
	d := indextest.Build(t, "dmtree", indexes.Env{Fabric: f, KeySize: ks, ValueSize: vs, CacheBytes: 8 << 20}, nil).(*DMTree)
	const records = 2400
	if err := d.BulkLoad(f.Setup(1), loaded(records)); err != nil {
		t.Fatal(err)
	}
	hot := key(702)
	me := transport.NodeID(1)
	f.Go(me, 0, func(ep transport.Endpoint) {
		if err := d.Tree.Client(ep).Update(hot, val(0)); err != nil {
			t.Error(err)
		}
	})
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
	f.ResetStats()
	reads0, writes0 := d.Tree.CombiningSizes()
	ops := make([]porcupine.Operation, 2*clients)
	for i := range clients {
		f.Go(me, i%cfg.Threads, func(ep transport.Endpoint) {
			c := d.Tree.Client(ep)
			v := uint64(i + 1)
			call := ep.Now()
			if err := c.Update(hot, val(v)); err != nil {
				t.Error(err)
			}
			ops[2*i] = porcupine.Operation{ClientId: i, Input: hotOp{write: true, val: v}, Call: call, Return: ep.Now()}
			call = ep.Now()
			got, ok, err := c.Search(hot)
			if err != nil || !ok {
				t.Errorf("search after update: %v, %v", ok, err)
			}
			ops[2*i+1] = porcupine.Operation{ClientId: i, Input: hotOp{val: binary.BigEndian.Uint64(got)}, Call: call, Return: ep.Now()}
		})
	}
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
	// Stamps are virtual nanoseconds; an operation returning at the
	// instant another is called may be ordered either way.
	for i := range ops {
		ops[i].Call *= 2
		ops[i].Return = ops[i].Return*2 + 1
	}
	hist := make([]combine.RegisterOp, len(ops))
	for i, op := range ops {
		in := op.Input.(hotOp)
		hist[i] = combine.RegisterOp{Write: in.write, Val: in.val, Call: op.Call, Return: op.Return}
	}
	if err := combine.CheckRegister(hist); err != nil {
		t.Errorf("updates and searches of one key by %d clients are not linearizable: %v", clients, err)
	}
	// With 100 overlapping writers porcupine's search may not finish: it
	// may only fail to decide, never find the history illegal.
	if res := porcupine.CheckOperationsTimeout(registerModel, ops, 2*time.Second); res == porcupine.Illegal {
		t.Errorf("porcupine: updates and searches of one key by %d clients are not linearizable", clients)
	}
	reads, writes := d.Tree.CombiningSizes()
	wOps, wRounds := writes.Ops()-writes0.Ops(), writes.Rounds()-writes0.Rounds()
	rOps, rRounds := reads.Ops()-reads0.Ops(), reads.Rounds()-reads0.Rounds()
	if wOps != clients || wRounds > clients/10 {
		t.Errorf("write combining: %d updates in %d rounds; want %d in at most %d", wOps, wRounds, clients, clients/10)
	}
	// At most 9 searches queue (8 waiting behind the one in flight).
	if rOps <= rRounds || rOps-rRounds > 8*rRounds {
		t.Errorf("read delegation: %d searches in %d rounds; want 2 to 9 a round", rOps, rRounds)
	}
	st := f.Stats()
	total := st.Verbs.Total()
	// Uncombined, each update is 5 verbs and each search 2; combined,
	// the 100 updates cost at most 10 rounds of 5 and the searches at
	// most 2 each.
	if n := total.Verbs(); n > 2*clients+50 {
		t.Errorf("%d updates and searches of one key issued %d verbs; want at most %d (%d uncombined)", clients, n, 2*clients+50, clients*7)
	}
	t.Logf("%d clients: %d verbs; write rounds %d (mean %.1f, max %d); read rounds %d (mean %.1f, max %d)",
		clients, total.Verbs(), wRounds, float64(wOps)/float64(wRounds), writes.Max(), rRounds, float64(rOps)/float64(rRounds), reads.Max())
}
