package marlin

import (
	"encoding/binary"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/indexes/internal/inner"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
)

// Every lock is free once the clients are done: each IDU's +1 on a leaf's
// Spear is taken back on the same leaf (also when a stale cache sends it
// on to a sibling), each SMO adds back what it took, and every internal
// node lock is released. A leaked share would stop the leaf's next split
// for good.
func TestLocksBalance(t *testing.T) {
	cfg := transport.Config{ComputeNodes: 2, MemoryNodes: 2, Threads: 2, MemoryCores: 1, ComputeCores: 1, MemoryBytes: 64 << 20, Seed: 5}
	f, err := sim.New(cfg, sim.CX6)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	x := build(t, f, map[string]string{"span": "16"})
	if err := x.BulkLoad(f.Setup(2), indextest.Pairs(500, key, key)); err != nil {
		t.Fatal(err)
	}
	phase := func(node transport.NodeID, do func(c indexes.Client, thread int) error) {
		for th := range 2 {
			f.Go(node, th, func(ep transport.Endpoint) {
				if err := do(x.NewClient(ep), th); err != nil {
					t.Error(err)
				}
			})
		}
		if err := f.Run(); err != nil {
			t.Fatal(err)
		}
	}
	// Node 2 caches the tree; node 3 splits most leaves under it; node 2
	// then writes through its stale cache, and both delete. Last, both
	// insert into the same leaves at once, so leaves split between a
	// client's walk and its READ of the leaf.
	phase(2, func(c indexes.Client, th int) error { return expect(c, uint64(th), key(uint64(th))) })
	phase(2, func(c indexes.Client, _ int) error { return scanN(c, key(0), 500) })
	phase(3, func(c indexes.Client, th int) error {
		for i := uint64(th); i < 1000; i += 2 {
			if err := c.Insert(fresh2(i/2), key(i)); err != nil {
				return err
			}
		}
		return nil
	})
	phase(2, func(c indexes.Client, th int) error {
		for i := uint64(th); i < 500; i += 2 {
			if err := c.Update(key(i), key(i+1)); err != nil {
				return err
			}
			if err := c.Insert(key(i+600), key(i)); err != nil {
				return err
			}
		}
		return nil
	})
	phase(3, func(c indexes.Client, th int) error {
		for i := uint64(th); i < 500; i += 4 {
			if err := c.Delete(key(i)); err != nil {
				return err
			}
		}
		return nil
	})
	checkLocksFree(t, f, x)

	// Without a cache every write walks from the root, and a leaf that
	// splits between the walk and the leaf's READ sends it on to the
	// sibling.
	g, err := sim.New(cfg, sim.CX6)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	y := indextest.Build(t, "marlin", indexes.Env{Fabric: g, KeySize: 8, ValueSize: 8}, map[string]string{"span": "16"}).(*Index)
	for w := range uint64(4) {
		g.Go(transport.NodeID(2+w%2), int(w/2), func(ep transport.Endpoint) {
			c := y.NewClient(ep)
			for i := w; i < 8000; i += 4 {
				if err := c.Insert(key(2000+i), key(i)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	if err := g.Run(); err != nil {
		t.Fatal(err)
	}
	checkLocksFree(t, g, y)
}

// checkLocksFree walks every level of x's tree through a setup endpoint
// and fails t for each node whose lock word is not zero.
func checkLocksFree(t *testing.T, f transport.Fabric, x *Index) {
	t.Helper()
	ep := f.Setup(transport.NodeID(f.Config().MemoryNodes))
	var w [8]byte
	if err := ep.Read(w[:], x.tree.RootPtr); err != nil {
		t.Fatal(err)
	}
	l := &x.l
	img := make([]byte, max(l.leafBytes, l.InnerBytes))
	addr, top := inner.DecodeRoot(binary.LittleEndian.Uint64(w[:]))
	for lvl := top; lvl >= 0; lvl-- {
		size := l.InnerBytes
		if lvl == 0 {
			size = l.leafBytes
		}
		first := transport.GAddr(0)
		for a, n := addr, 0; a != 0; a, n = inner.Sibling(img[:size]), n+1 {
			if err := ep.Read(img[:size], a); err != nil {
				t.Fatal(err)
			}
			if w := lockWord(img); w != 0 {
				t.Errorf("level %d node %d at %v: lock word %d, want 0", lvl, n, a, int64(w))
			}
			if n == 0 && lvl > 0 {
				first = l.InnerChild(img, 0)
			}
		}
		addr = first
	}
}

// A leaf whose slots are used up by deleted keys is compacted in place,
// not split: the tree of one leaf stays one leaf, and every live key
// survives.
func TestCompaction(t *testing.T) {
	f := newSim(t)
	x := build(t, f, map[string]string{"span": "8"})
	f.Go(1, 0, func(ep transport.Endpoint) {
		c := x.NewClient(ep)
		for i := range uint64(5) {
			if err := c.Insert(key(i), key(i)); err != nil {
				t.Error(err)
			}
		}
		for i := range uint64(4) {
			if err := c.Delete(key(i)); err != nil {
				t.Error(err)
			}
		}
		// Slots: 1 live, 4 tombstones; two more inserts leave one free
		// slot, so the third rebuilds the leaf with 4 live entries.
		for i := uint64(5); i < 8; i++ {
			if err := c.Insert(key(i), key(i)); err != nil {
				t.Error(err)
			}
		}
		for i := range uint64(8) {
			v, ok, err := c.Search(key(i))
			if err != nil || ok != (i >= 4) || ok && string(v) != string(key(i)) {
				t.Errorf("search(%d) = %x, %v, %v", i, v, ok, err)
			}
		}
	})
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
	var w [8]byte
	if err := f.Setup(1).Read(w[:], x.tree.RootPtr); err != nil {
		t.Fatal(err)
	}
	root, rootLevel := inner.DecodeRoot(binary.LittleEndian.Uint64(w[:]))
	img := make([]byte, x.l.leafBytes)
	if err := f.Setup(1).Read(img, root); err != nil {
		t.Fatal(err)
	}
	used := 0
	for i := range x.l.span {
		if x.l.slotPtr(img, i) != slotFree {
			used++
		}
	}
	if rootLevel != 0 || used != 4 {
		t.Errorf("root level %d with %d used slots, want a compacted root leaf of 4", rootLevel, used)
	}
}
