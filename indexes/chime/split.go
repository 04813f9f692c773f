package chime

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// leafSpec is everything a freshly built leaf holds.
type leafSpec struct {
	lowInf  bool
	low     []byte
	meta    rightMeta
	node    byte // node version of every item
	entries []entry
}

// emptyLeaf is a whole-leaf window of empty slots of node version node,
// for laying out a fresh leaf.
func (g *geometry) emptyLeaf(node byte) *window {
	w := &window{g: g, slots: make([]entry, g.span), node: node, fresh: true}
	for i := range w.slots {
		w.slots[i].hdr = node << nodeVerShift
	}
	return w
}

// buildLeaf lays out a whole leaf: header, entries placed by hopscotch
// insertion in the given order, and the metadata replicas. ok is false
// when some entry finds no slot.
func (g *geometry) buildLeaf(s leafSpec, home func([]byte) int) (buf []byte, vacancy uint64, ok bool) {
	w := g.emptyLeaf(s.node)
	for _, e := range s.entries {
		if !w.insert(e.key, e.val, home(e.key), home) {
			return nil, 0, false
		}
	}
	buf, vacancy = g.render(w, s)
	return buf, vacancy, true
}

// render lays out the leaf of whole-leaf window w with the fences and
// sibling of s (s.entries is ignored).
func (g *geometry) render(w *window, s leafSpec) ([]byte, uint64) {
	hdr := w.node << nodeVerShift
	im := image{buf: make([]byte, g.leafBytes)}
	if s.lowInf {
		im.buf[offLowFlags] = flagInfinite
	}
	copy(im.buf[offLowFence:], s.low)
	for i := range w.slots {
		e := w.slots[i]
		e.hdr = e.hdr&occupiedBit | hdr // fresh leaf: entry versions restart
		g.putSlot(&im, i, e)
	}
	m := s.meta
	m.hdr = occupiedBit | hdr
	for k := range g.groups {
		g.putMeta(&im, k, m)
	}
	vacancy := w.vacancy(0)
	putWord(im.buf[offLockWord:], vacancy)
	return im.buf, vacancy
}

// split divides the locked, full leaf of window w (the whole leaf) in two
// around its median key, inserting key/val on its side, and returns the
// separator and new leaf for the parent. The new right leaf is written first and on the
// same memory node (the same QP, so in order) as the old one, whose
// rewrite lowers its high fence, clears the moved entries, advances its
// node version and releases its lock in one batch.
func (c *client) split(w *window, key, val []byte) (sep []byte, right transport.GAddr, err error) {
	g := c.g
	all := make([]entry, 0, g.span+1)
	for _, e := range w.slots {
		if e.occupied() {
			all = append(all, e)
		}
	}
	all = append(all, entry{key: key, val: val})
	slices.SortFunc(all, func(a, b entry) int { return bytes.Compare(a.key, b.key) })
	c.ep.Compute(int64(len(all)) * cost.NodeSearch(len(all)))
	mid := len(all) / 2
	sep = bytes.Clone(all[mid].key)

	leaf := w.leaf
	right, err = c.alloc.AllocOn(c.ep, leaf.Node(), uint64(g.leafBytes), lineBytes)
	if err != nil {
		return nil, 0, fmt.Errorf("splitting leaf %v: %w", leaf, err)
	}
	rightBuf, _, ok := g.buildLeaf(leafSpec{low: sep, meta: w.meta, entries: all[mid:]}, c.home)
	if !ok {
		return nil, 0, fmt.Errorf("splitting leaf %v: %d entries do not fit a fresh leaf of span %d", leaf, len(all)-mid, g.span)
	}
	leftMeta := rightMeta{high: sep, sibling: right}
	// The old leaf keeps its low fence: only the stream is rewritten.
	leftBuf, leftVac, ok := g.buildLeaf(leafSpec{meta: leftMeta, node: (w.node + 1) & 7, entries: all[:mid]}, c.home)
	if !ok {
		return nil, 0, fmt.Errorf("splitting leaf %v: %d entries do not fit it again", leaf, mid)
	}
	ops := []transport.Op{
		transport.WriteOp(right, rightBuf),
		transport.WriteOp(leaf.Add(uint64(g.header)), leftBuf[g.header:]),
		c.unlockOp(leaf, leftVac, true),
	}
	if err := c.ep.Post(ops...); err != nil {
		return nil, 0, fmt.Errorf("splitting leaf %v: %w", leaf, err)
	}
	c.x.leaves.Add(1)
	return sep, right, nil
}

// insertSeparator adds sep -> child to the internal node of level covering
// sep, splitting it (and its ancestors) when full. A root split makes a
// new root and swings the root pointer while the old root is still locked.
func (c *client) insertSeparator(level int, sep []byte, child transport.GAddr) error {
	ig := c.x.ig
	for {
		n, err := c.descend(sep, level)
		if err != nil {
			return err
		}
		a := n.addr
		var cur *inner
		for {
			if err := c.lockInner(a); err != nil {
				return err
			}
			if cur, err = c.readInner(a); err != nil {
				return err
			}
			if !cur.beyond(sep) {
				break
			}
			if err := c.unlockInner(a); err != nil {
				return err
			}
			a = cur.sibling
		}
		if cur.hasSep(sep) {
			return c.unlockInner(a)
		}
		cur.insertSep(sep, child)
		cur.version++
		if len(cur.keys) <= ig.span {
			body, err := ig.encode(cur)
			if err != nil {
				return err
			}
			if err := c.ep.Post(transport.WriteOp(a.Add(inFront), body[inFront:]), unlockInnerOp(a)); err != nil {
				return fmt.Errorf("updating internal node %v: %w", a, err)
			}
			c.cache.put(cur, sep)
			return nil
		}
		up, right, err := c.splitInner(cur)
		if err != nil {
			return err
		}
		// Only the root spans both infinite fences.
		if !(cur.lowInf && right.highInf) {
			level, sep, child = level+1, up, right.addr
			continue
		}
		if err := c.newRoot(cur, up, right); err != nil {
			return err
		}
		return c.unlockInner(a)
	}
}

// splitInner splits the locked, overfull node n, writes both halves and
// unlocks n unless it was the root (which stays locked until the new root
// is published). It returns the separator pushed up and the right half.
func (c *client) splitInner(n *inner) ([]byte, *inner, error) {
	ig := c.x.ig
	mid := len(n.keys) / 2
	up := n.keys[mid]
	ra, err := c.alloc.AllocOn(c.ep, n.addr.Node(), uint64(ig.bytes), lineBytes)
	if err != nil {
		return nil, nil, fmt.Errorf("splitting internal node %v: %w", n.addr, err)
	}
	right := &inner{
		addr: ra, level: n.level, low: up, high: n.high, highInf: n.highInf,
		sibling: n.sibling, leftmost: n.children[mid],
		keys: slices.Clone(n.keys[mid+1:]), children: slices.Clone(n.children[mid+1:]),
	}
	wasRoot := n.lowInf && n.highInf
	n.keys, n.children = n.keys[:mid], n.children[:mid]
	n.high, n.highInf, n.sibling = up, false, ra
	n.index()
	right.index()
	rb, err := ig.encode(right)
	if err != nil {
		return nil, nil, err
	}
	lb, err := ig.encode(n)
	if err != nil {
		return nil, nil, err
	}
	ops := []transport.Op{transport.WriteOp(ra, rb), transport.WriteOp(n.addr.Add(inFront), lb[inFront:])}
	if !wasRoot {
		ops = append(ops, unlockInnerOp(n.addr))
	}
	if err := c.ep.Post(ops...); err != nil {
		return nil, nil, fmt.Errorf("splitting internal node %v: %w", n.addr, err)
	}
	c.x.inners.Add(1)
	c.cache.put(n, n.low)
	c.cache.put(right, right.low)
	return up, right, nil
}

// newRoot publishes a root above the split old root left and its new
// sibling right.
func (c *client) newRoot(left *inner, up []byte, right *inner) error {
	ig := c.x.ig
	a, err := c.alloc.AllocOn(c.ep, c.x.root.Node(), uint64(ig.bytes), lineBytes)
	if err != nil {
		return fmt.Errorf("growing the tree: %w", err)
	}
	r := &inner{
		addr: a, level: left.level + 1, lowInf: true, highInf: true,
		low: make([]byte, ig.keySize), high: make([]byte, ig.keySize),
		leftmost: left.addr, keys: [][]byte{up}, children: []transport.GAddr{right.addr},
	}
	r.index()
	b, err := ig.encode(r)
	if err != nil {
		return err
	}
	if err := c.ep.Write(a, b); err != nil {
		return fmt.Errorf("growing the tree: %w", err)
	}
	old, err := c.ep.CAS(c.x.root, uint64(left.addr), uint64(a))
	if err != nil {
		return fmt.Errorf("growing the tree: %w", err)
	}
	if old != uint64(left.addr) {
		return fmt.Errorf("growing the tree: root pointer is %v, not the split root %v", transport.GAddr(old), left.addr)
	}
	c.x.inners.Add(1)
	c.cache.rootNode.Store(r)
	c.cache.put(r, r.low)
	return nil
}

func unlockInnerOp(a transport.GAddr) transport.Op {
	return transport.WriteOp(a.Add(inLock), make([]byte, 8))
}

func (c *client) unlockInner(a transport.GAddr) error { return c.ep.Post(unlockInnerOp(a)) }
