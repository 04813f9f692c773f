package fpbtree

import (
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
)

// With no internal cache every search walks from the root: the client's
// first walk READs the 8-byte root pointer, its later walks start at the
// root it found (the artifact's local_root_addr), one node READ a level.
func TestTraversalKeepsRoot(t *testing.T) {
	const ks, vs = 24, 8
	idx, f, node := loadedTree(t, 8, 0, 2400, 3)
	g := NewGeometry(ks, vs, 8, 8)
	search := func(i uint64) indextest.Op[indexes.Client] {
		return indextest.Op[indexes.Client]{Name: "search", Do: func(c indexes.Client) error {
			_, _, err := c.Search(testKey(i*3, ks))
			return err
		}}
	}
	got := indextest.VerbsPerOp(t, f, node, idx.NewClient, nil, []indextest.Op[indexes.Client]{search(10), search(2000)})
	// 2,400 entries, 6 a leaf, 6 children a node: 400 leaves under four
	// internal levels.
	const levels = 4
	leafReads := uint64(g.Table - 8 + g.Entry)
	first, second := got[0][transport.VerbRead], got[1][transport.VerbRead]
	if want := (transport.VerbCount{Count: 1 + levels + 2, BytesIn: 8 + levels*uint64(g.NodeSize) + leafReads}); first != want {
		t.Errorf("first search: READs %+v, want the root pointer, %d nodes, table and entry: %+v", first, levels, want)
	}
	if want := (transport.VerbCount{Count: levels + 2, BytesIn: levels*uint64(g.NodeSize) + leafReads}); second != want {
		t.Errorf("second search: READs %+v, want %d nodes, table and entry: %+v", second, levels, want)
	}
}
