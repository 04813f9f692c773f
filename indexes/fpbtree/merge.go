package fpbtree

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
)

// merge runs when a delete empties r's leaf (DMTree section 4.2): while
// holding r's lock it locks the right neighbour and their common parent,
// moves the neighbour's entries into r's leaf slot for slot (r's range
// grows, its version is bumped), marks the neighbour dead (its version
// bumped, its sibling pointing back at r so stale readers find the keys)
// and removes it from the parent. merged is false, with nothing changed,
// when the neighbour has another parent or changed meanwhile; the empty
// leaf then stays. Freed leaves are not reclaimed.
func (c *Client) merge(r ref, tbl *Table) (merged bool, err error) {
	g := &c.t.G
	rr, err := c.locate(r.high)
	if err != nil || rr.parent != r.parent || rr.leaf == r.leaf || !bytes.Equal(rr.low, r.high) {
		return false, err
	}
	if err := c.lockLeaf(rr); err != nil {
		return false, err
	}
	rt, err := c.primaryTable(rr)
	if err != nil {
		return false, err
	}
	if rt.Version != rr.version {
		return false, c.unlockLeaf(rr)
	}
	if err := c.lockNode(r.parent); err != nil {
		return false, err
	}
	pn, err := c.readNode(r.parent)
	if err != nil {
		return false, err
	}
	li := slices.IndexFunc(pn.ents, func(e ientry) bool { return e.child == r.leaf })
	if li < 0 || li+1 >= len(pn.ents) || pn.ents[li+1].child != rr.leaf {
		if err := c.unlockNode(r.parent); err != nil {
			return false, err
		}
		return false, c.unlockLeaf(rr)
	}
	rimg, rh, err := c.readLeaf(rr.leaf)
	if err != nil {
		return false, err
	}

	nv, dv := r.version+1, rr.version+1
	limg := make([]byte, g.LeafSize)
	g.encodeLeafHeader(limg, &leafHeader{version: nv, sibling: rh.sibling, fp: r.fp, flags: rh.flags & flagInf, low: r.low, high: rh.high})
	binary.LittleEndian.PutUint64(limg[lhLock:], 1) // still held: the table WRITE releases it
	lt := Table{FPs: make([]byte, g.Span), Version: nv}
	zk, zv := make([]byte, g.K), make([]byte, g.V)
	for i := range g.Span {
		e, _ := g.decodeEntry(rimg[g.entryOff(i):])
		if occupied(rt.FPs[i]) && e.valid {
			g.encodeEntry(limg[g.entryOff(i):], true, nv, bytes.Clone(e.key), bytes.Clone(e.val))
			lt.FPs[i] = rt.FPs[i]
		} else {
			g.encodeEntry(limg[g.entryOff(i):], false, nv, zk, zv)
		}
		g.encodeEntry(rimg[g.entryOff(i):], false, dv, zk, zv)
	}
	rh.version, rh.flags, rh.sibling = dv, flagDead|rh.flags&flagInf, r.leaf
	g.encodeLeafHeader(rimg, &rh)
	dt := Table{FPs: make([]byte, g.Span), Version: dv}
	if off, err := c.inLeafTable(r.leaf, r.fp); err != nil {
		return false, err
	} else if off >= 0 {
		g.EncodeTable(limg[off:], &lt, 1)
		g.EncodeTable(rimg[off:], &dt, 1)
	}
	if err := c.ep.Write(r.leaf, limg); err != nil {
		return false, fmt.Errorf("write merged leaf %v: %w", r.leaf, err)
	}
	if err := c.ep.Write(rr.leaf, rimg); err != nil {
		return false, fmt.Errorf("write dead leaf %v: %w", rr.leaf, err)
	}
	rr.version = dv
	if err := c.writeTableUnlock(rr, &dt); err != nil {
		return false, err
	}
	pn.ents = slices.Delete(pn.ents, li+1, li+2)
	pn.ents[li].version = nv
	if err := c.writeNodeUnlock(r.parent, pn); err != nil {
		return false, err
	}
	c.ns.cache.put(pn)
	r.version = nv
	return true, c.writeTableUnlock(r, &lt)
}
