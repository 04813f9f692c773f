package rolex

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

// Leaf locks. Each leaf slot has an 8-byte lock word right after the
// leaf; a writer locks the leaf the model routes its key to (its synonym
// leaves share that lock) by a masked CAS of the lock bit, as the port,
// or a plain CAS of the whole word (the word holds nothing else), and
// releases it with an 8-byte WRITE of zero batched behind its leaf WRITEs.

func (c *client) lock(leafAddr transport.GAddr) error {
	w := leafAddr.Add(c.g.lockOff)
	for {
		var old uint64
		var err error
		if c.x.maskedCAS {
			old, err = c.ep.MaskedCAS(w, 0, lockBit, lockBit, lockBit)
		} else {
			old, err = c.ep.CAS(w, 0, lockBit)
		}
		if err != nil {
			return fmt.Errorf("locking leaf %v: %w", leafAddr, err)
		}
		if old&lockBit == 0 {
			return nil
		}
		c.ep.Backoff(cost.CachelineTransfer())
	}
}

func (c *client) unlockOp(leafAddr transport.GAddr) transport.Op {
	return transport.WriteOp(leafAddr.Add(c.g.lockOff), make([]byte, 8))
}

// writeOp is the WRITE of l, whole, at a with the next node version.
func (c *client) writeOp(a transport.GAddr, l *leaf) transport.Op {
	l.ver++
	buf := make([]byte, c.g.wire)
	c.g.encode(l, buf)
	c.ep.Compute(cost.Copy(c.g.wire))
	return transport.WriteOp(a, buf)
}

// modify is the port's update: a search, the lock of the key's leaf, a
// re-READ of the leaf that held the key (following synonym pointers if a
// split moved it on), then one doorbell of the leaf WRITE and the unlock.
// A nil val deletes.
func (c *client) modify(key, val []byte) error {
	c.bufs.reset()
	m, err := c.model()
	if err != nil {
		return err
	}
	held, _, _, ok, err := c.locate(m, key)
	if err != nil {
		return err
	}
	if !ok {
		return indexes.ErrNotFound
	}
	t := m.target(key)
	primary := m.addr(t, c.g.stride)
	if err := c.lock(primary); err != nil {
		return err
	}
	at, lf, ei, ok, err := c.relocate(held, key)
	if err == nil && !ok {
		// Deleted and inserted again ahead of the leaf it was in: read
		// the whole group, stable under the lock.
		var full []group
		if full, err = c.readGroups(m, t, t, true); err == nil {
			var fi int
			if _, fi, ei, ok = c.lookup(full, key); ok {
				at, lf = full[0].addrs[fi], full[0].leaves[fi]
			}
		}
	}
	if err != nil {
		return err
	}
	if !ok {
		c.comb.CutWrite(nil) // absent for as long as the lock is held
		if err := c.ep.Post(c.unlockOp(primary)); err != nil {
			return fmt.Errorf("unlocking: %w", err)
		}
		return indexes.ErrNotFound
	}
	if val == nil {
		c.g.removeAt(lf, ei)
	} else {
		copy(c.g.val(lf, ei), c.comb.CutWrite(val))
	}
	if err := c.ep.Post(c.writeOp(at, lf), c.unlockOp(primary)); err != nil {
		return fmt.Errorf("writing leaf %v: %w", at, err)
	}
	return nil
}

// relocate re-reads the leaf at a and, while key is not there, the
// synonym leaves after it, one READ each.
func (c *client) relocate(a transport.GAddr, key []byte) (transport.GAddr, *leaf, int, bool, error) {
	for steps := 0; a != 0 && steps < maxChain; steps++ {
		ls, err := c.readLeaves([]transport.GAddr{a})
		if err != nil {
			return 0, nil, 0, false, err
		}
		c.ep.Compute(cost.NodeSearch(ls[0].n))
		if ei, ok := c.g.find(ls[0], key); ok {
			return a, ls[0], ei, true, nil
		}
		a = ls[0].next
	}
	return 0, nil, 0, false, nil
}

// insert is the port's insert: a READ of the predicted leaves, the lock
// of the leaf the key belongs to, a re-READ of that leaf and its synonym
// leaves, then one doorbell of the leaf WRITE(s) and the unlock. A leaf
// that is full splits: its upper half moves to a new synonym leaf linked
// after it, written first.
func (c *client) insert(key, val []byte) error {
	c.bufs.reset()
	m, err := c.model()
	if err != nil {
		return err
	}
	c.ep.Compute(cost.NodeSearch(len(m.segs)) + cost.NodeSearch(m.leaves))
	l, r := m.leafRange(key)
	t := m.targetNear(key, l, r)
	l, r = min(l, t), max(r, t)
	if _, err := c.readGroups(m, l, r, false); err != nil {
		return err
	}
	primary := m.addr(t, c.g.stride)
	if err := c.lock(primary); err != nil {
		return err
	}
	gr, j, pos, ci, err := c.insertLeaves(m, t, key)
	if err != nil {
		return err
	}
	lf := gr.leaves[j]
	val = c.comb.CutWrite(val)
	var ops []transport.Op
	if ei, ok := c.g.find(lf, key); ok {
		copy(c.g.val(lf, ei), val)
	} else if lf.n < c.g.span {
		i, _ := c.g.find(lf, key)
		c.g.insertAt(lf, i, key, val)
	} else {
		na, err := c.alloc.AllocOn(c.ep, primary.Node(), c.g.stride, transport.CachelineBytes)
		if err != nil {
			return fmt.Errorf("allocating a synonym leaf: %w", err)
		}
		c.x.synLeaves.Add(1)
		nl := c.g.newLeaf()
		half := c.g.span / 2
		s := c.g.kvBytes()
		copy(nl.kv, lf.kv[half*s:lf.n*s])
		nl.n = lf.n - half
		clear(lf.kv[half*s:])
		lf.n = half
		nl.next, lf.next = lf.next, na
		dst := lf
		if bytes.Compare(key, c.g.key(nl, 0)) > 0 {
			dst = nl
		}
		i, _ := c.g.find(dst, key)
		c.g.insertAt(dst, i, key, val)
		ci.addrs = slices.Insert(ci.addrs, pos, na)
		ci.firsts = slices.Insert(ci.firsts, pos+1, slices.Clone(c.g.key(nl, 0)))
		// One QP: the new leaf lands before the pointer to it.
		ops = append(ops, c.writeOp(na, nl))
	}
	ci.firsts[pos] = slices.Clone(c.g.key(lf, 0))
	c.st.setChain(t, ci)
	ops = append(ops, c.writeOp(gr.addrs[j], lf), c.unlockOp(primary))
	return c.post(ops...)
}

// insertLeaves reads, under the lock of leaf t, the leaf of t's chain
// that key belongs to, the last non-empty one whose first key is at or
// below key (the first leaf if none): the chain's leaves hold ascending
// key ranges, so that leaf alone may hold key. When the node knows the
// chain's first keys it reads just that leaf and the next one (the
// port's leaf and synonym leaf) and checks that the chain still places
// key there; otherwise, or if the check fails, it reads the whole chain.
// It returns the leaves read, the index of key's leaf among them, its
// position in the chain and the chain's information, copied.
func (c *client) insertLeaves(m *model, t int, key []byte) (gr group, j, pos int, ci chainInfo, err error) {
	known := c.st.chain(t)
	if known.firsts != nil && len(known.firsts) == len(known.addrs)+1 {
		pos = known.place(key)
		all := append([]transport.GAddr{m.addr(t, c.g.stride)}, known.addrs...)
		addrs := all[pos:min(pos+2, len(all))]
		leaves, err := c.readLeaves(addrs)
		if err != nil {
			return group{}, 0, 0, chainInfo{}, err
		}
		l := leaves[0]
		ok := pos == 0 || l.n > 0 && bytes.Compare(c.g.key(l, 0), key) <= 0
		if len(addrs) == 2 {
			nx := leaves[1]
			ok = ok && l.next == addrs[1] && nx.n > 0 && bytes.Compare(c.g.key(nx, 0), key) > 0
		} else {
			ok = ok && l.next == 0
		}
		if ok {
			ci = chainInfo{addrs: slices.Clone(known.addrs), firsts: slices.Clone(known.firsts)}
			return group{idx: t, addrs: addrs, leaves: leaves}, 0, pos, ci, nil
		}
	}
	groups, err := c.readGroups(m, t, t, true)
	if err != nil {
		return group{}, 0, 0, chainInfo{}, err
	}
	gr = groups[0]
	for i, l := range gr.leaves {
		if l.n > 0 && bytes.Compare(c.g.key(l, 0), key) <= 0 {
			j = i
		}
	}
	return gr, j, j, c.chainOf(gr), nil
}

func (c *client) post(ops ...transport.Op) error {
	if err := c.ep.Post(ops...); err != nil {
		return fmt.Errorf("writing leaves: %w", err)
	}
	return nil
}
