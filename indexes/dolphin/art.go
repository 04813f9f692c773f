package dolphin

import (
	"fmt"

	"github.com/dmbench/dmbench/transport"
)

// Changes to the ART in remote memory. Every slot changes by CAS, paired
// in one batch with a READ of the node's header: a header found obsolete
// means the node was being replaced (grown or split by its prefix) and the
// change may be missing from the copy, so it is made again on the node
// that replaced it. A node is replaced by setting its obsolete bit first
// (by CAS on the header: the one winner does the replacement), then
// reading its slots, which no longer change usefully, writing the new node
// and CASing it into the parent. A traversal that meets an obsolete node
// starts again from the root.

// allocNode allocates size bytes of remote memory for a node.
func (c *client) allocNode(size int) (transport.GAddr, error) {
	a, err := c.alloc.Alloc(c.ep, uint64(size), nodeAlign)
	if err != nil {
		return 0, fmt.Errorf("allocating a %d-byte node: %w", size, err)
	}
	c.x.bytes.Add(uint64(size))
	return a, nil
}

// setSlot CASes slot i of n from old to new and reads n's header in the
// same batch. It reports whether the CAS took, and whether n was obsolete.
func (c *client) setSlot(n *inode, i int, old, new slot) (ok, obsolete bool, cur slot, err error) {
	var hdr [8]byte
	ops := []transport.Op{
		transport.CASOp(c.l.slotAddr(n, i), uint64(old), uint64(new)),
		transport.ReadOp(hdr[:], n.addr),
	}
	if err := c.post(ops...); err != nil {
		return false, false, 0, fmt.Errorf("setting slot %d of node %v: %w", i, n.addr, err)
	}
	return ops[0].Old == uint64(old), header(leUint64(hdr[:])).obsolete(), slot(ops[0].Old), nil
}

// addChild adds the child word s (for key byte s.key()) to the fresh node
// n: Node256 by its byte, the others at the first empty slot, walking on
// past slots others fill meanwhile, growing n when full. It reports
// whether s is in the tree; false means another child took its byte or n
// was replaced, and the caller starts again.
func (c *client) addChild(n *inode, s slot, key []byte) (bool, error) {
	if n.typ() == node256 {
		ok, obs, _, err := c.setSlot(n, int(s.key()), 0, s)
		if err != nil || !ok || obs {
			return false, err
		}
		c.cache.put(n.withSlot(int(s.key()), s), c.ep.Rand())
		return true, nil
	}
	for j := n.filled(); j < len(n.slots); j++ {
		ok, obs, cur, err := c.setSlot(n, j, 0, s)
		if err != nil {
			return false, err
		}
		if ok {
			if obs {
				return false, nil
			}
			c.cache.put(n.withSlot(j, s), c.ep.Rand())
			return true, nil
		}
		if cur.key() == s.key() {
			return false, nil
		}
	}
	return c.grow(n, s, key)
}

// grow replaces the full node n by one of the next type holding n's
// children and extra.
func (c *client) grow(n *inode, extra slot, key []byte) (bool, error) {
	frozen, ok, err := c.freeze(n)
	if err != nil || !ok {
		return false, err
	}
	t := n.typ() + 1
	slots := make([]slot, t.capacity())
	place := func(j int, s slot) {
		if t == node256 {
			slots[s.key()] = s
		} else {
			slots[j] = s
		}
	}
	j := 0
	for _, s := range frozen.slots {
		if s.empty() {
			continue
		}
		if s.key() == extra.key() {
			extra = 0 // the byte was taken before n froze
		}
		place(j, s)
		j++
	}
	if extra != 0 {
		place(j, extra)
	}
	hdr := makeHeader(n.depth(), len(n.partial), t)
	img := c.l.encodeInner(hdr, n.partial, slots)
	a, err := c.allocNode(len(img))
	if err != nil {
		return false, err
	}
	if err := c.post(transport.WriteOp(a, img)); err != nil {
		return false, fmt.Errorf("writing a grown node: %w", err)
	}
	grown := &inode{addr: a, hdr: hdr, partial: n.partial, slots: slots, size: len(img)}
	if err := c.replace(n, grown, key); err != nil {
		return false, err
	}
	c.cache.put(grown, c.ep.Rand())
	return extra != 0, nil
}

// freeze sets n's obsolete bit and reads its slots as they stay. It
// reports false when another client froze n first.
func (c *client) freeze(n *inode) (*inode, bool, error) {
	op := transport.CASOp(n.addr, uint64(n.hdr), uint64(n.hdr|obsoleteBit))
	if err := c.postOne(&op); err != nil {
		return nil, false, fmt.Errorf("freezing node %v: %w", n.addr, err)
	}
	if op.Old != uint64(n.hdr) {
		return nil, false, nil
	}
	frozen, err := c.fetch(n.addr, n.typ())
	if err != nil {
		return nil, false, err
	}
	return frozen, true, nil
}

// replace swings the slot that points to the frozen node old over to
// new, wherever old's parent is by now (it may itself have been
// replaced). key is a key whose path runs through old.
func (c *client) replace(old, new *inode, key []byte) error {
	for range maxRetries {
		p, i, err := c.findParent(key, old.addr, new.addr)
		if err != nil {
			return err
		}
		cur := p.slots[i]
		if cur.addr() == new.addr {
			break
		}
		w, err := makeSlot(kindInner, new.typ(), cur.key(), new.addr)
		if err != nil {
			return err
		}
		ok, obs, _, err := c.setSlot(p, i, cur, w)
		if err != nil {
			return err
		}
		if ok && !obs {
			c.cache.put(p.withSlot(i, w), c.ep.Rand())
			break
		}
	}
	c.cache.drop(old.addr)
	return nil
}
