package dex

import (
	"bytes"
	"testing"

	"github.com/dmbench/dmbench/transport"
)

// checkRouting checks that every swizzled child of every cached inner node
// of compute node cn covers exactly its parent entry's range: a cached
// parent that lost a separator routes keys to a leaf that does not cover
// them, and the traversal refreshes forever if the parent is owned.
func checkRouting(t *testing.T, x *Index, cn *computeNode) {
	t.Helper()
	l := &x.l
	for _, f := range cn.frames {
		if f.state.Load() == stateFree || f.data.level() == 0 {
			continue
		}
		for i := range f.data.count() {
			p := l.child(f.data, i)
			if p&swizzled == 0 {
				continue
			}
			ch := cn.frames[p&^swizzled]
			low, high := l.childRange(f.data, i)
			if !bytes.Equal(l.low(ch.data), low) || !bytes.Equal(l.highKey(ch.data), high) {
				t.Errorf("node %x entry %d [%x, %x) holds node %x [%x, %x)", f.addr.Load(), i, low, high,
					ch.addr.Load(), l.low(ch.data), l.highKey(ch.data))
			}
		}
	}
}

// TestRefreshKeepsNewerCachedCopy is the regression test of a livelock in
// the conformance Linearizable case: a thread refreshing a shared node
// read its remote image, then waited for the node's frame lock while
// another thread of the same compute node split a child under it (remote
// node first, then the cached copy), and overwrote the cached copy with
// the older image. Once the node's own split narrowed its fences to one
// partition it was owned, never refreshed again, and its lost separator
// sent keys to a leaf that did not cover them: the lookup refreshed and
// retried forever. Here the interleaving is laid out step by step: the
// image is read, a leaf under the node splits, and the stale image is
// installed.
func TestRefreshKeepsNewerCachedCopy(t *testing.T) {
	f, x := newGolden(t, map[string]string{"offload": "off", "admission": "eager"})
	f.Go(2, 0, func(ep transport.Endpoint) {
		c := x.newClient(ep)
		if err := search(5000, true)(c); err != nil {
			t.Error(err)
			return
		}
		root := c.cn.root.Load()
		p := c.cn.frames[x.l.child(root.data, x.l.innerFind(root.data, key(5000)))&^swizzled]
		a := transport.GAddr(p.addr.Load())
		if !x.parts.Load().shared(x.l.low(p.data), x.l.highKey(p.data)) {
			t.Errorf("level-1 node %x is not shared", a)
			return
		}
		stale := make(node, NodeBytes)
		if err := x.readNode(ep, a, true, stale); err != nil {
			t.Error(err)
			return
		}
		// The leaf [4234, 4326) holds 46 entries: the 13th insert splits it.
		if err := insertRange(4235, 4259)(c); err != nil {
			t.Error(err)
			return
		}
		n := p.data.count()
		if n != stale.count()+1 || p.rver.Load() != stale.lockWord()+2 {
			t.Errorf("the leaf split left the shared parent with %d entries at version %d (was %d at %d)",
				n, p.rver.Load(), stale.count(), stale.lockWord())
			return
		}
		c.begin()
		c.install(p, a, stale, key(4236))
		if p.data.count() != n {
			t.Errorf("installing the older image left %d entries, want %d", p.data.count(), n)
		}
		checkRouting(t, x, c.cn)
		for k := uint64(4234); k <= 4400; k++ {
			if err := search(k, k%2 == 0 || k <= 4259)(c); err != nil {
				t.Error(err)
			}
		}
	})
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
}
