package fpbtree

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// readLeaf READs a whole leaf, again while its header is torn.
func (c *Client) readLeaf(a transport.GAddr) ([]byte, leafHeader, error) {
	g := &c.t.G
	img := make([]byte, g.LeafSize)
	for {
		if err := c.ep.Read(img, a); err != nil {
			return nil, leafHeader{}, fmt.Errorf("read leaf %v: %w", a, err)
		}
		c.ep.Compute(cost.Checksum(g.LeafHdr))
		if h, ok := g.decodeLeafHeader(img); ok {
			return img, h, nil
		}
		c.ep.Backoff(0) // let the writer run on real fabrics; free on sim
	}
}

// inLeafTable is the offset of the leaf's table block within the leaf
// image when the placement keeps it there, or -1.
func (c *Client) inLeafTable(leaf transport.GAddr, fp uint64) (int, error) {
	pa, err := c.t.place.Primary(leaf, fp)
	if err != nil {
		return 0, err
	}
	if pa >= leaf && pa < leaf.Add(uint64(c.t.G.LeafSize)) {
		return int(pa - leaf), nil
	}
	return -1, nil
}

// kv is a live entry during a split.
type kv struct{ key, val []byte }

// split splits r's full leaf while holding its lock and inserts key:
// the upper half of the live entries moves to a new leaf with its own
// table; the left leaf is rewritten in place under version+1 (every
// entry, so readers holding the old version notice); the parent gains
// the new leaf and the left leaf's new version; the table WRITE of the
// left leaf releases the lock last.
func (c *Client) split(r ref, tbl *Table, key, val []byte) error {
	g := &c.t.G
	img, h, err := c.readLeaf(r.leaf)
	if err != nil {
		return err
	}
	live := []kv{{bytes.Clone(key), bytes.Clone(val)}}
	for i := range g.Span {
		if !occupied(tbl.FPs[i]) {
			continue
		}
		e, _ := g.decodeEntry(img[g.entryOff(i):])
		live = append(live, kv{bytes.Clone(e.key), bytes.Clone(e.val)})
	}
	c.ep.Compute(int64(len(live)) * cost.NodeSearch(len(live)))
	slices.SortFunc(live, func(a, b kv) int { return bytes.Compare(a.key, b.key) })
	mid := len(live) / 2
	splitKey := live[mid].key

	// The new right leaf.
	ra, err := c.alloc.Alloc(c.ep, uint64(g.LeafSize), 64)
	if err != nil {
		return fmt.Errorf("split leaf %v: %w", r.leaf, err)
	}
	rfp, err := c.t.place.NewTable(c.ep, ra)
	if err != nil {
		return fmt.Errorf("split leaf %v: %w", r.leaf, err)
	}
	c.t.leaves.Add(1)
	rimg := make([]byte, g.LeafSize)
	g.encodeLeafHeader(rimg, &leafHeader{version: 1, sibling: h.sibling, fp: rfp, flags: h.flags & flagInf, low: splitKey, high: h.high})
	rt := Table{FPs: make([]byte, g.Span), Version: 1}
	zk, zv := make([]byte, g.K), make([]byte, g.V)
	for i := range g.Span {
		if j := mid + i; j < len(live) {
			g.encodeEntry(rimg[g.entryOff(i):], true, 1, live[j].key, live[j].val)
			rt.FPs[i] = Fingerprint(live[j].key)
		} else {
			g.encodeEntry(rimg[g.entryOff(i):], false, 1, zk, zv)
		}
	}
	if err := c.ep.Write(ra, rimg); err != nil {
		return fmt.Errorf("write new leaf %v: %w", ra, err)
	}
	if err := c.t.writeTableTo(c.ep, ra, rfp, &rt, 0); err != nil {
		return fmt.Errorf("write new leaf's table: %w", err)
	}

	// The left leaf, rewritten in place with the lock still held.
	nv := r.version + 1
	lt := Table{FPs: make([]byte, g.Span), Version: nv}
	for i := range g.Span {
		e, _ := g.decodeEntry(img[g.entryOff(i):])
		if occupied(tbl.FPs[i]) && e.valid && bytes.Compare(e.key, splitKey) < 0 {
			g.encodeEntry(img[g.entryOff(i):], true, nv, bytes.Clone(e.key), bytes.Clone(e.val))
			lt.FPs[i] = tbl.FPs[i]
		} else {
			g.encodeEntry(img[g.entryOff(i):], false, nv, zk, zv)
		}
	}
	if bytes.Compare(key, splitKey) < 0 {
		i := bytes.IndexByte(lt.FPs, 0)
		g.encodeEntry(img[g.entryOff(i):], true, nv, key, val)
		lt.FPs[i] = Fingerprint(key)
	}
	h.version, h.sibling, h.high, h.flags = nv, ra, splitKey, h.flags&^flagInf
	g.encodeLeafHeader(img, &h)
	off, err := c.inLeafTable(r.leaf, r.fp)
	if err != nil {
		return err
	}
	if off >= 0 {
		g.EncodeTable(img[off:], &lt, 1)
	}
	if err := c.ep.Write(r.leaf, img); err != nil {
		return fmt.Errorf("rewrite split leaf %v: %w", r.leaf, err)
	}
	if err := c.insertInternal(1, r.parent, entryOf(splitKey, ra, 1, rfp), r.leaf, nv); err != nil {
		return err
	}
	r.version = nv
	return c.writeTableUnlock(r, &lt)
}

// lockNode takes an internal node's lock (its last word, on the memory node).
func (c *Client) lockNode(a transport.GAddr) error {
	for {
		old, err := c.ep.CAS(c.t.G.nodeLock(a), 0, 1)
		if err != nil {
			return fmt.Errorf("lock internal node %v: %w", a, err)
		}
		if old == 0 {
			return nil
		}
		c.ep.Backoff(0) // let the holder run on real fabrics; free on sim
	}
}

// writeNodeUnlock WRITEs node n at a and then its lock word in one
// doorbell batch: one QP, so the unlock lands after the node.
func (c *Client) writeNodeUnlock(a transport.GAddr, n *inode) error {
	g := &c.t.G
	img := make([]byte, g.NodeSize)
	g.encodeNode(img, n)
	c.ep.Compute(cost.Checksum(g.NodeSize))
	if err := c.ep.Post(transport.WriteOp(a, img[:g.NodeSize-8]), transport.WriteOp(g.nodeLock(a), img[g.NodeSize-8:])); err != nil {
		return fmt.Errorf("write internal node %v: %w", a, err)
	}
	return nil
}

// unlockNode releases an internal node's lock.
func (c *Client) unlockNode(a transport.GAddr) error {
	var zero [8]byte
	if err := c.ep.Write(c.t.G.nodeLock(a), zero[:]); err != nil {
		return fmt.Errorf("unlock internal node %v: %w", a, err)
	}
	return nil
}

// insertInternal adds e to the node of level covering e.key (starting at
// a when known), raising left's entry to version leftVer, and splits the
// node upward when it overflows (B-link: the right half stays reachable
// through the sibling pointer until the parent has its entry).
func (c *Client) insertInternal(level int, a transport.GAddr, e ientry, left transport.GAddr, leftVer uint64) error {
	g := &c.t.G
	for {
		if a.IsNil() {
			n, err := c.traverse(e.key, level)
			if err != nil {
				return err
			}
			a = n.addr
		}
		if err := c.lockNode(a); err != nil {
			return err
		}
		n, err := c.readNode(a)
		if err != nil {
			return err
		}
		if !n.inf() && bytes.Compare(e.key, n.high.b) >= 0 || bytes.Compare(e.key, n.low.b) < 0 {
			if err := c.unlockNode(a); err != nil {
				return err
			}
			a = 0
			if !n.inf() && bytes.Compare(e.key, n.high.b) >= 0 {
				a = n.sibling
			}
			continue
		}
		for j := range n.ents {
			if n.ents[j].child == left && leftVer > n.ents[j].version {
				n.ents[j].version = leftVer
			}
		}
		pos, dup := slices.BinarySearchFunc(n.ents, e.key, func(x ientry, k []byte) int { return bytes.Compare(x.key, k) })
		if dup {
			n.ents[pos] = e
		} else {
			n.ents = slices.Insert(n.ents, pos, e)
		}
		c.ep.Compute(cost.NodeSearch(len(n.ents)) + cost.Copy(len(n.ents)*g.IEntry))
		if len(n.ents) <= g.ISpan {
			if err := c.writeNodeUnlock(a, n); err != nil {
				return err
			}
			if level == 1 {
				c.ns.cache.put(n)
			}
			return nil
		}
		return c.splitNode(a, n)
	}
}

// splitNode splits the overfull node n at a while holding its lock,
// releases it, and adds the new node to the level above (or makes a new
// root).
func (c *Client) splitNode(a transport.GAddr, n *inode) error {
	g := &c.t.G
	mid := len(n.ents) / 2
	n2 := &inode{version: 1, level: n.level, sibling: n.sibling, flags: n.flags & flagInf,
		low: ikeyOf(n.ents[mid].key), high: n.high, ents: slices.Clone(n.ents[mid:])}
	a2, err := c.alloc.Alloc(c.ep, uint64(g.NodeSize), 64)
	if err != nil {
		return fmt.Errorf("split internal node %v: %w", a, err)
	}
	c.t.inners.Add(1)
	n2.addr = a2
	img := make([]byte, g.NodeSize)
	g.encodeNode(img, n2)
	if err := c.ep.Write(a2, img); err != nil {
		return fmt.Errorf("write new internal node %v: %w", a2, err)
	}
	n.ents = n.ents[:mid]
	n.high, n.sibling, n.version = n2.low, a2, n.version+1
	n.flags &^= flagInf
	root, err := c.readRoot()
	if err != nil {
		return err
	}
	if root == a {
		if err := c.newRoot(a, n, n2); err != nil {
			return err
		}
	} else if err := c.writeNodeUnlock(a, n); err != nil {
		return err
	}
	if n.level == 1 {
		c.ns.cache.put(n)
		c.ns.cache.put(n2)
	}
	if root == a {
		return nil
	}
	return c.insertInternal(n.level+1, 0, entryOf(n2.low.b, a2, 0, 0), a, 0)
}

// newRoot grows the tree: a root above n and n2, swung in by CAS on the
// root pointer while n's lock is held (only the holder of the root's lock
// can split the root, so the CAS succeeds).
func (c *Client) newRoot(a transport.GAddr, n, n2 *inode) error {
	g := &c.t.G
	nr := &inode{version: 1, level: n.level + 1, flags: flagInf, low: n.low, high: ikeyOf(make([]byte, g.K)),
		ents: []ientry{entryOf(n.low.b, a, 0, 0), entryOf(n2.low.b, n2.addr, 0, 0)}}
	ra, err := c.alloc.Alloc(c.ep, uint64(g.NodeSize), 64)
	if err != nil {
		return fmt.Errorf("new root: %w", err)
	}
	c.t.inners.Add(1)
	nr.addr = ra
	img := make([]byte, g.NodeSize)
	g.encodeNode(img, nr)
	if err := c.ep.Write(ra, img); err != nil {
		return fmt.Errorf("write new root %v: %w", ra, err)
	}
	img = make([]byte, g.NodeSize)
	g.encodeNode(img, n)
	if err := c.ep.Write(a, img[:g.NodeSize-8]); err != nil {
		return fmt.Errorf("write old root %v: %w", a, err)
	}
	if old, err := c.ep.CAS(c.t.root, uint64(a), uint64(ra)); err != nil || old != uint64(a) {
		return fmt.Errorf("swing root pointer from %v to %v: found %v: %v", a, ra, transport.GAddr(old), err)
	}
	return c.unlockNode(a)
}
