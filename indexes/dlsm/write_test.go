package dlsm

import (
	"encoding/binary"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
)

// The update that fills the memtable drives its flush and the compaction
// after it, but the key's stripe lock covers only the liveness check and
// the memtable insert: another thread's update of the same key completes
// while that work runs, as a Put of the artifact never waits for dLSM's
// background threads.
func TestStripeNotHeldAcrossFlush(t *testing.T) {
	cfg := transport.Config{ComputeNodes: 1, MemoryNodes: 1, Threads: 2, MemoryCores: 1, ComputeCores: 1, MemoryBytes: 64 << 20}
	f := indextest.SimFabric(t, cfg, sim.CX6)
	x := indextest.Build(t, "dlsm", indexes.Env{Fabric: f, KeySize: 8, ValueSize: 8},
		map[string]string{"memtable": "2048"}).(*Index)
	k := func(i int) []byte { return binary.BigEndian.AppendUint64(nil, uint64(i+1)) }
	s := x.shards[0]
	node := cfg.ComputeNodeIDs()[0]
	// Fill the memtable to the last entry it takes before switching.
	f.Go(node, 0, func(ep transport.Endpoint) {
		c := x.NewClient(ep)
		for i := 0; s.cur.size.Load()+int64(2*x.f.esz) <= x.memBytes; i++ {
			if err := c.Insert(k(i), k(i)); err != nil {
				t.Error(err)
				return
			}
		}
	})
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
	var flusherDone, otherDone int64
	f.Go(node, 0, func(ep transport.Endpoint) {
		c := x.NewClient(ep)
		// The insert fills the memtable; the update switches it.
		if err := c.Insert(k(1000), k(1000)); err != nil {
			t.Error(err)
		}
		if err := c.Update(k(0), k(100)); err != nil {
			t.Error(err)
		}
		flusherDone = ep.Now()
	})
	f.Go(node, 1, func(ep transport.Endpoint) {
		c := x.NewClient(ep)
		ep.Sleep(2000) // after the first thread's update has switched the memtable
		if err := c.Update(k(0), k(200)); err != nil {
			t.Error(err)
		}
		otherDone = ep.Now()
	})
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
	if len(s.ver.levels[0])+len(s.ver.levels[1]) == 0 {
		t.Fatal("the memtable was never flushed")
	}
	if otherDone >= flusherDone {
		t.Errorf("the other thread's update finished at %d ns, after the flushing update (%d ns): it waited for the flush", otherDone, flusherDone)
	}
}
