package fpbtree

import (
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

// A slot a delete freed is not reused: with DMTree's packed 40-byte
// entries a slot may straddle two cachelines, and a reader holding the
// deleted key's fingerprint could READ a new entry landing there half
// written. The leaf's empty slots fill first; then the next insert splits
// the leaf, which rewrites it under a new version and frees the slot for
// good.
func TestFreedSlotNotReused(t *testing.T) {
	const ks, vs = 24, 8
	if g := NewGeometry(ks, vs, 32, 32); g.Stride != 40 || g.LeafSize != 1472 {
		t.Fatalf("DMTree's geometry: stride %d, leaf %d bytes; want 40-byte entries packed in a 1,472-byte leaf", g.Stride, g.LeafSize)
	}
	tr, f, node := loadedTree(t, 8, 1<<20, 6, 3)
	loaded := tr.leaves.Load()
	step := func(what string, do func(c indexes.Client) error) {
		t.Helper()
		f.Go(node, 0, func(ep transport.Endpoint) {
			if err := do(tr.NewClient(ep)); err != nil {
				t.Errorf("%s: %v", what, err)
			}
		})
		if err := f.Run(); err != nil {
			t.Fatal(err)
		}
	}
	step("delete", func(c indexes.Client) error { return c.Delete(testKey(3, ks)) })
	for _, k := range []uint64{1, 4} {
		step("insert", func(c indexes.Client) error { return c.Insert(testKey(k, ks), testVal(k, vs)) })
	}
	if n := tr.leaves.Load(); n != loaded {
		t.Fatalf("%d leaves after filling the two empty slots, want the %d loaded", n, loaded)
	}
	step("insert", func(c indexes.Client) error { return c.Insert(testKey(7, ks), testVal(7, vs)) })
	if n := tr.leaves.Load(); n != loaded+1 {
		t.Errorf("%d leaves after an insert into a leaf whose only free slot was freed by a delete, want %d (a split)", n, loaded+1)
	}
	step("search", func(c indexes.Client) error {
		for _, k := range []uint64{0, 1, 4, 6, 7, 9, 12, 15} {
			if v, ok, err := c.Search(testKey(k, ks)); err != nil || !ok || string(v) != string(testVal(k, vs)) {
				t.Errorf("search %d = %x, %v, %v", k, v, ok, err)
			}
		}
		if _, ok, err := c.Search(testKey(3, ks)); ok || err != nil {
			t.Errorf("deleted key found (%v, %v)", ok, err)
		}
		return nil
	})
}
