package blink

import (
	"bytes"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
)

// A split of the old root's new sibling, before the old root's splitter
// has published the new root, waits for it (re-reading the root pointer)
// and then inserts its separator into the new root: only the root's own
// splitter may CAS the root pointer, or the other half would be lost.
func TestSplitWaitsForNewRoot(t *testing.T) {
	cfg := transport.Config{ComputeNodes: 1, MemoryNodes: 2, Threads: 2, MemoryCores: 1, ComputeCores: 1, MemoryBytes: 64 << 20}
	f := indextest.SimFabric(t, cfg, sim.CX6)
	x := indextest.Build(t, "blink", indexes.Env{Fabric: f, KeySize: 8, ValueSize: 8}, map[string]string{"node_bytes": "128"}).(*Index)
	if x.l.leafCard != 5 {
		t.Fatalf("leaves of %d entries, the test wants 5", x.l.leafCard)
	}
	insert := func(c indexes.Client, ks ...uint64) {
		for _, k := range ks {
			if err := c.Insert(key(k), key(k)); err != nil {
				t.Errorf("insert %d: %v", k, err)
			}
		}
	}
	const publishAt = 200_000 // ns
	cn := transport.NodeID(cfg.MemoryNodes)
	var root transport.GAddr
	// The root's splitter: fills the root leaf R, splits it, and only
	// publishes the new root a while later.
	f.Go(cn, 0, func(ep transport.Endpoint) {
		c := x.newClient(ep)
		insert(indexes.Checked("blink", x.l.keySize, x.l.valSize, c), 0, 10, 20, 30, 40)
		k := key(45)
		c.Begin(indexes.OpInsert, k)
		a, err := c.descend(k, 0)
		if err == nil {
			a, err = c.lock(a, rear(c.buf), k)
		}
		if err != nil {
			t.Error(err)
			return
		}
		root = a
		i, _ := x.l.leafSearch(c.lk, k)
		sep, right, err := c.splitLeaf(a, i, k, k)
		if err != nil {
			t.Error(err)
			return
		}
		ep.Sleep(publishAt - ep.Now())
		if err := c.insertParent(1, sep, a, right); err != nil {
			t.Error(err)
		}
	})
	// Meanwhile another client fills R's new right half B and splits it.
	f.Go(cn, 1, func(ep transport.Endpoint) {
		c := x.NewClient(ep)
		ep.Sleep(publishAt / 4)
		insert(c, 46, 47)
		ep.SetTag(1)
		insert(c, 48)
		ep.SetTag(0)
	})
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
	waited := f.Stats().Verbs.ByTag[1][transport.VerbRead].Count
	if waited < 20 {
		t.Errorf("the split of B issued %d READs: it did not wait for the new root", waited)
	}
	f.Go(cn, 0, func(ep transport.Endpoint) {
		c := x.newClient(ep)
		a, lvl, err := c.readRoot()
		if err != nil || lvl != 1 || a == root {
			t.Errorf("root %v at level %d (%v), want a new level-1 root over %v", a, lvl, err, root)
			return
		}
		if err := c.readNode(c.buf, a); err != nil || count(c.buf) != 2 {
			t.Errorf("the root holds %d keys (%v), want 2: both separators", count(c.buf), err)
		}
		for _, k := range []uint64{0, 10, 20, 30, 40, 45, 46, 47, 48} {
			if v, ok, err := indexes.Checked("blink", x.l.keySize, x.l.valSize, c).Search(key(k)); err != nil || !ok || !bytes.Equal(v, key(k)) {
				t.Errorf("search %d = %x, %v, %v", k, v, ok, err)
			}
		}
	})
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
}
