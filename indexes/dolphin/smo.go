package dolphin

import (
	"bytes"
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// newLeaf allocates and writes a leaf for key's prefix covering every last
// byte, holding key live with val.
func (c *client) newLeaf(key, val []byte) (transport.GAddr, error) {
	img := make(leafImage, c.l.leafBytes)
	c.l.initLeaf(img, 0, c.l.prefixOf(key), 0, 255, 0)
	c.l.setKeyWord(img, 0, keyWord(stateLive, key[c.l.keySize-1]))
	c.l.putValue(img, 0, val, 1)
	a, err := c.allocNode(len(img))
	if err != nil {
		return 0, err
	}
	c.charge(cost.Copy(len(img)))
	if err := c.post(transport.WriteOp(a, img)); err != nil {
		return 0, fmt.Errorf("writing a new leaf: %w", err)
	}
	return a, nil
}

// insertLeaf inserts a key whose prefix has no leaf (Figure 4(b)): the new
// leaf goes into the empty slot of the node where the traversal ended,
// under a new Node4 where the key parts from another leaf's prefix (ART
// lazy expansion) or from a node's partial key (path compression). It
// reports false when a race undid the attempt and the insert starts again.
func (c *client) insertLeaf(key, val []byte, f found) (bool, error) {
	last := f.d.path[len(f.d.path)-1]
	n := last.n
	if !f.other && f.d.mismatch < 0 && n.depth() == c.l.keySize-1 {
		return false, fmt.Errorf("special node %v covers no leaf for %x", n.addr, key)
	}
	leaf, err := c.newLeaf(key, c.comb.CutWrite(c.wval))
	if err != nil {
		return false, err
	}
	switch {
	case f.other:
		return c.expand(key, f, leaf)
	case f.d.mismatch >= 0:
		return c.splitPrefix(key, n, f.d.mismatch, leaf)
	}
	w, err := makeSlot(kindLeaf, 0, key[n.depth()], leaf)
	if err != nil {
		return false, err
	}
	return c.addChild(n, w, key)
}

// expand puts a Node4 at the first byte where key's prefix and the prefix
// of the leaf f found part, holding both leaves, in place of that leaf.
func (c *client) expand(key []byte, f found, leaf transport.GAddr) (bool, error) {
	p := f.parent.n
	other := c.l.prefix(f.img)
	d := p.depth() + 1
	for d < c.l.prefixLen && other[d] == key[d] {
		d++
	}
	if d >= c.l.prefixLen {
		return false, nil
	}
	ow, err := makeSlot(kindLeaf, 0, other[d], f.leaf)
	if err != nil {
		return false, err
	}
	nw, err := makeSlot(kindLeaf, 0, key[d], leaf)
	if err != nil {
		return false, err
	}
	m, err := c.writeInner(makeHeader(d, d-p.depth()-1, node4), key[p.depth()+1:d], []slot{ow, nw})
	if err != nil {
		return false, err
	}
	cur := p.slots[f.parent.idx]
	mw, err := m.word(cur.key())
	if err != nil {
		return false, err
	}
	ok, obs, _, err := c.setSlot(p, f.parent.idx, cur, mw)
	if err != nil || !ok {
		return false, err
	}
	c.cache.put(m, c.ep.Rand())
	if obs {
		return false, nil
	}
	c.cache.put(p.withSlot(f.parent.idx, mw), c.ep.Rand())
	return true, nil
}

// splitPrefix replaces node n, whose partial key parts from key at its
// byte i, by a Node4 at that byte holding a copy of n with a shorter
// partial key and the new leaf.
func (c *client) splitPrefix(key []byte, n *inode, i int, leaf transport.GAddr) (bool, error) {
	frozen, ok, err := c.freeze(n)
	if err != nil || !ok {
		return false, err
	}
	base := n.parentDepth() + 1
	d := base + i
	cp, err := c.writeInner(makeHeader(n.depth(), len(n.partial)-i-1, n.typ()), n.partial[i+1:], frozen.slots)
	if err != nil {
		return false, err
	}
	cw, err := cp.word(n.partial[i])
	if err != nil {
		return false, err
	}
	lw, err := makeSlot(kindLeaf, 0, key[d], leaf)
	if err != nil {
		return false, err
	}
	m, err := c.writeInner(makeHeader(d, i, node4), n.partial[:i], []slot{cw, lw})
	if err != nil {
		return false, err
	}
	if err := c.replace(n, m, key); err != nil {
		return false, err
	}
	c.cache.put(cp, c.ep.Rand())
	c.cache.put(m, c.ep.Rand())
	return true, nil
}

// writeInner allocates and writes an internal node.
func (c *client) writeInner(hdr header, partial []byte, children []slot) (*inode, error) {
	slots := make([]slot, hdr.typ().capacity())
	copy(slots, children)
	img := c.l.encodeInner(hdr, partial, slots)
	a, err := c.allocNode(len(img))
	if err != nil {
		return nil, err
	}
	if err := c.post(transport.WriteOp(a, img)); err != nil {
		return nil, fmt.Errorf("writing an internal node: %w", err)
	}
	return &inode{addr: a, hdr: hdr, partial: bytes.Clone(partial), slots: slots, size: len(img)}, nil
}

// entry is a live key of a leaf image: its last byte and slot.
type entry struct {
	b  byte
	at int
}

func (c *client) liveEntries(img leafImage) []entry {
	// The key words name distinct last bytes, so one pass buckets them
	// in key order (no comparison sort).
	var at [256]int16
	n := 0
	for i := range c.l.span {
		if w := c.l.keyWordAt(img, i); wordState(w) == stateLive {
			at[wordByte(w)] = int16(i + 1)
			n++
		}
	}
	es := make([]entry, 0, n)
	for b, i := range at {
		if i > 0 {
			es = append(es, entry{byte(b), int(i - 1)})
		}
	}
	c.charge(cost.LinearScan(c.l.span))
	return es
}

// fill writes es (from src) into the empty leaf image dst from slot 0.
func (c *client) fill(dst, src leafImage, es []entry) {
	for j, e := range es {
		c.l.setKeyWord(dst, j, keyWord(stateLive, e.b))
		from := c.l.valsOff + e.at*c.l.valStride
		copy(dst[c.l.valsOff+j*c.l.valStride:], src[from:from+c.l.valStride])
	}
}

// smo splits or compacts the full leaf f found (section III.B, SMO). It
// takes Spear exclusively (FAA -1,000,000), polls until the IDU holders
// have drained, reads the leaf, and either compacts it in place (when at
// most half its slots hold live keys: tombstones are dropped) or moves the
// upper half of its keys to a new leaf that it links into the special
// parent (creating the special node at the leaf's first split), then
// rewrites the leaf, everything but the Spear word, and releases Spear.
func (c *client) smo(f found, key []byte) error {
	leaf := f.leaf
	lock := c.l.lockAddr(leaf)
	op := transport.FAAOp(lock, uint64(1<<64-spearSMO))
	if err := c.postOne(&op); err != nil {
		return fmt.Errorf("taking Spear for an SMO: %w", err)
	}
	if spearBusy(op.Old) {
		return c.post(transport.FAAOp(lock, spearSMO))
	}
	var word [8]byte
	for int64(leUint64(word[:])) != -spearSMO {
		if err := c.read(word[:], lock); err != nil {
			return fmt.Errorf("waiting for a leaf's writers: %w", err)
		}
	}
	img := make(leafImage, c.l.leafBytes)
	if err := c.read(img, leaf); err != nil {
		return fmt.Errorf("reading a leaf for its SMO: %w", err)
	}
	live := c.liveEntries(img)
	prefix := bytes.Clone(c.l.prefix(img))
	lo, hi, v := c.l.lo(img), c.l.hi(img), c.l.frontVersion(img)
	rev := c.l.revPtr(img)
	lower := make(leafImage, c.l.leafBytes)
	if len(live) <= c.l.span/2 {
		c.l.initLeaf(lower, rev, prefix, lo, hi, v+1)
		c.fill(lower, img, live)
	} else {
		h := len(live) / 2
		mid := live[h].b
		upper, err := c.allocNode(c.l.leafBytes)
		if err != nil {
			return err
		}
		up := make(leafImage, c.l.leafBytes)
		c.l.initLeaf(up, 0, prefix, mid, hi, 0)
		c.fill(up, img, live[h:])
		if rev, err = c.linkLeaf(leaf, upper, up, rev, prefix, lo, mid, f); err != nil {
			return err
		}
		c.l.initLeaf(lower, rev, prefix, lo, mid-1, v+1)
		c.fill(lower, img, live[:h])
	}
	c.charge(cost.Copy(2 * c.l.leafBytes))
	if err := c.post(transport.WriteOp(leaf, lower[:c.l.lockOff]), transport.FAAOp(lock, spearSMO)); err != nil {
		return fmt.Errorf("rewriting a leaf after its SMO: %w", err)
	}
	return nil
}

// linkLeaf writes the new upper leaf and links it into the ART: into the
// leaf's special parent, or at the leaf's first split into a new special
// node that takes the leaf's place in its parent (Figure 4(d), (e)). It
// returns the rev_ptr both leaves now carry.
func (c *client) linkLeaf(leaf, upper transport.GAddr, up leafImage, rev slot, prefix []byte, lo, mid byte, f found) (slot, error) {
	last := c.l.keySize - 1
	keyLo := append(bytes.Clone(prefix), lo)
	keyMid := append(bytes.Clone(prefix), mid)
	lw, err := makeSlot(kindLeaf, 0, lo, leaf)
	if err != nil {
		return 0, err
	}
	uw, err := makeSlot(kindLeaf, 0, mid, upper)
	if err != nil {
		return 0, err
	}
	if rev.kind() != kindInner {
		// First split: the leaf hangs off a normal node.
		var p *inode
		i := -1
		if f.parent != nil && f.parent.n.depth() != last && f.parent.n.slots[f.parent.idx].addr() == leaf {
			p, i = f.parent.n, f.parent.idx
		}
		var sp *inode
		for range maxRetries {
			if p == nil {
				if p, i, err = c.findParent(keyLo, leaf); err != nil {
					return 0, err
				}
			}
			hdr := makeHeader(last, last-p.depth()-1, node4)
			partial := prefix[p.depth()+1:]
			slots := make([]slot, 4)
			slots[0], slots[1] = lw, uw
			if sp == nil {
				a, err := c.allocNode(c.l.innerBytes(node4))
				if err != nil {
					return 0, err
				}
				sp = &inode{addr: a}
			}
			sp = &inode{addr: sp.addr, hdr: hdr, partial: bytes.Clone(partial), slots: slots, size: c.l.innerBytes(node4)}
			rw, err := makeSlot(kindInner, node4, 0, sp.addr)
			if err != nil {
				return 0, err
			}
			putUint64(up, uint64(rw))
			if err := c.post(transport.WriteOp(upper, up), transport.WriteOp(sp.addr, c.l.encodeInner(hdr, partial, slots))); err != nil {
				return 0, fmt.Errorf("writing a new leaf and special node: %w", err)
			}
			cur := p.slots[i]
			pw, err := sp.word(cur.key())
			if err != nil {
				return 0, err
			}
			ok, obs, _, err := c.setSlot(p, i, cur, pw)
			if err != nil {
				return 0, err
			}
			if ok && !obs {
				c.cache.put(p.withSlot(i, pw), c.ep.Rand())
				c.cache.put(sp, c.ep.Rand())
				return rw, nil
			}
			if ok {
				// p was being replaced: see whether its copy has the
				// special node already.
				if q, j, err := c.findParent(keyLo, leaf, sp.addr); err == nil && q.slots[j].addr() == sp.addr {
					return rw, nil
				}
			}
			p = nil
		}
		return 0, fmt.Errorf("dolphin: linking the first split of leaf %v did not settle", leaf)
	}
	// Later splits: add the upper leaf to the special parent, found
	// through the leaf's rev_ptr unless that node has been replaced.
	sp, err := c.fetch(rev.addr(), rev.typ())
	if err != nil {
		return 0, err
	}
	for range maxRetries {
		if sp == nil || sp.obsolete() || sp.depth() != last || !holds(sp, leaf) {
			if sp, _, err = c.findParent(keyLo, leaf); err != nil {
				return 0, err
			}
		}
		if sp.depth() != last {
			return 0, fmt.Errorf("leaf %v of a split range hangs off a normal node %v", leaf, sp.addr)
		}
		for _, s := range sp.slots {
			if s.addr() == upper {
				return makeSlot(kindInner, sp.typ(), 0, sp.addr)
			}
		}
		rw, err := makeSlot(kindInner, sp.typ(), 0, sp.addr)
		if err != nil {
			return 0, err
		}
		putUint64(up, uint64(rw))
		if err := c.post(transport.WriteOp(upper, up)); err != nil {
			return 0, fmt.Errorf("writing a new leaf: %w", err)
		}
		ok, err := c.addChild(sp, uw, keyMid)
		if err != nil {
			return 0, err
		}
		if ok && sp.typ() != node256 && sp.filled() < len(sp.slots) {
			return rw, nil
		}
		if ok && sp.typ() == node256 {
			return rw, nil
		}
		// The special node grew or was replaced: look again.
		sp = nil
	}
	return 0, fmt.Errorf("dolphin: linking a split of leaf %v did not settle", leaf)
}

// holds reports whether n has a slot pointing at a.
func holds(n *inode, a transport.GAddr) bool {
	for _, s := range n.slots {
		if !s.empty() && s.addr() == a {
			return true
		}
	}
	return false
}
