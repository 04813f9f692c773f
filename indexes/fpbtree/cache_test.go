package fpbtree

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestNodeCacheModel checks the cache against a sorted list of nodes under
// random puts of nodes over a small key space (short keys, so that
// prefixes tie and whole keys decide) and random lookups: a put replaces
// the nodes whose low fence falls in the new node's range, a lookup finds
// the node covering the key, and FIFO eviction keeps the budget.
func TestNodeCacheModel(t *testing.T) {
	for _, tc := range []struct {
		name   string
		budget int // nodes
		keyLen int
	}{
		{"unbounded", 1 << 20, 2},
		{"evicting", 40, 2},
		{"long keys", 1 << 20, 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, uint64(tc.keyLen)))
			key := func() []byte {
				k := make([]byte, tc.keyLen)
				k[len(k)-1] = byte(rng.IntN(256))
				k[0] = byte(rng.IntN(2))
				return k
			}
			c := newNodeCache(uint64(tc.budget), 1)
			var model, fifo []*inode
			for range 20000 {
				// Mostly narrow ranges, so that the cache grows past a run.
				lo, hi := key(), key()
				if rng.IntN(32) != 0 && lo[len(lo)-1] < 255 {
					hi = bytes.Clone(lo)
					hi[len(hi)-1]++
				}
				switch bytes.Compare(lo, hi) {
				case 0:
					continue // a node's range is never empty
				case 1:
					lo, hi = hi, lo
				}
				if rng.IntN(2) == 0 {
					n := &inode{low: ikeyOf(lo), high: ikeyOf(hi)}
					if rng.IntN(20) == 0 {
						n.flags = flagInf
					}
					c.put(n)
					model = slices.DeleteFunc(model, func(o *inode) bool {
						return bytes.Compare(o.low.b, lo) >= 0 && (n.inf() || bytes.Compare(o.low.b, hi) < 0)
					})
					model = append(model, n)
					slices.SortFunc(model, func(a, b *inode) int { return bytes.Compare(a.low.b, b.low.b) })
					fifo = append(fifo, n)
					for len(model) > tc.budget {
						old := fifo[0]
						fifo = fifo[1:]
						model = slices.DeleteFunc(model, func(o *inode) bool { return o == old })
					}
					if got := c.size(); got != uint64(len(model)) {
						t.Fatalf("cache holds %d nodes, model %d", got, len(model))
					}
					continue
				}
				var want *inode
				for _, o := range model {
					if bytes.Compare(o.low.b, lo) <= 0 {
						want = o
					}
				}
				if want != nil && !contains(want.low.b, want.high.b, want.inf(), lo) {
					want = nil
				}
				k := ikeyOf(lo)
				if got, ok := c.lookup(&k); got != want || ok != (want != nil) {
					t.Fatalf("lookup %x: got %p %v, want %p", lo, got, ok, want)
				}
			}
		})
	}
}
