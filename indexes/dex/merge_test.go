package dex

import (
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
)

// countLevel counts the nodes at level lv of compute node cn's tree:
// cached nodes from the cache, the others read through ep (a setup
// endpoint, between runs).
func countLevel(t *testing.T, x *Index, cn *computeNode, ep transport.Endpoint, lv int) int {
	t.Helper()
	l := &x.l
	var walk func(img node) int
	walk = func(img node) int {
		if img.level() == lv {
			return 1
		}
		n := 0
		for i := range img.count() {
			p := l.child(img, i)
			if p&swizzled != 0 {
				n += walk(cn.frames[p&^swizzled].data)
				continue
			}
			ch := make(node, NodeBytes)
			if err := ep.Read(ch, transport.GAddr(p)); err != nil {
				t.Fatal(err)
			}
			n += walk(ch)
		}
		return n
	}
	return walk(cn.root.Load().data)
}

// TestMergeInnerNodes deletes nine keys in ten of the lower three
// quarters of the tree, from the top down, on a compute node that owns
// every key (the other is a spare): leaves merge, the level-1 nodes they
// leave under a quarter full merge under the owned root, and every
// remaining key is still found, by search and by scan.
func TestMergeInnerNodes(t *testing.T) {
	cfg := goldenCluster()
	f := indextest.SimFabric(t, cfg, sim.CX5)
	env := indexes.Env{Fabric: f, KeySize: 8, ValueSize: 8, CacheBytes: 1 << 20, Partitions: [][]byte{key(0)}}
	x := indextest.Build(t, "dex", env, map[string]string{"offload": "off", "admission": "eager"}).(*Index)
	const n, cut = 24000, 36000
	if err := x.BulkLoad(f.Setup(2), loadSeq(n, 2)); err != nil {
		t.Fatal(err)
	}
	kept := func(k uint64) bool { return k%2 == 0 && k > 0 && k <= 2*n && (k >= cut || k/2%10 == 0) }
	run := func(body func(c *client)) {
		t.Helper()
		f.Go(2, 0, func(ep transport.Endpoint) { body(x.newClient(ep)) })
		if err := f.Run(); err != nil {
			t.Fatal(err)
		}
	}
	run(func(c *client) {
		for k := uint64(2); k <= 2*n; k += 2 {
			if err := search(k, true)(c); err != nil {
				t.Error(err)
				return
			}
		}
	})
	cn := x.cn[0]
	before := countLevel(t, x, cn, f.Setup(2), 1)
	run(func(c *client) {
		for k := uint64(cut - 2); k > 0; k -= 2 {
			if !kept(k) {
				if err := c.Delete(key(k)); err != nil {
					t.Errorf("delete %d: %v", k, err)
					return
				}
			}
		}
	})
	after := countLevel(t, x, cn, f.Setup(2), 1)
	if after > before/2 {
		t.Errorf("level 1 has %d nodes after the deletes, %d before: want at most half", after, before)
	}
	t.Logf("level-1 nodes: %d before, %d after", before, after)
	checkRouting(t, x, cn)
	var want int
	run(func(c *client) {
		for k := uint64(1); k <= 2*n+1; k++ {
			if kept(k) {
				want++
			}
			if err := search(k, kept(k))(c); err != nil {
				t.Error(err)
				return
			}
		}
		got := 0
		err := c.Scan(key(0), 2*n, func(k, v []byte) bool {
			got++
			return true
		})
		if err != nil || got != want {
			t.Errorf("scan returned %d entries, %v; want %d", got, err, want)
		}
	})
}
