package rftree

import (
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes/internal/inner"
	"github.com/dmbench/dmbench/transport"
)

// Splits (section 3.3.4). The overflowing data node is locked already: a
// new node is taken from the compute node's free list, or allocated when
// the list is empty, and gets the upper half of the entries; it is
// written first, then the shrunk node (its high fence the separator, its
// sibling the new node), unlocked; then the separator goes into the
// parent under the parent's own lock. Readers that reach the old node
// with a key that moved follow its sibling pointer meanwhile (B-link).
// A writer never holds two locks except in a merge.

// splitData splits the locked, full data node img at a while inserting
// (key, val) at entry position i.
func (c *client) splitData(a transport.GAddr, img []byte, i int, key, val []byte) error {
	l := &c.x.l
	n := count(img) + 1
	entry := func(j int) ([]byte, []byte) {
		switch {
		case j < i:
			return l.leafKey(img, j), l.leafVal(img, j)
		case j == i:
			return key, val
		default:
			return l.leafKey(img, j-1), l.leafVal(img, j-1)
		}
	}
	h := n / 2
	sepKey, _ := entry(h)
	sep := append([]byte(nil), sepKey...)
	right, version, err := c.allocData()
	if err != nil {
		return inner.JoinUnlock(err, c.unlock(a, l.lockWord(img)))
	}
	sib := c.sib
	l.initNode(sib, 0, sep, l.highOrNil(img), sibling(img), version)
	for j := h; j < n; j++ {
		k, v := entry(j)
		copy(l.leafKey(sib, j-h), k)
		copy(l.leafVal(sib, j-h), v)
	}
	setCount(sib, n-h)
	c.seal(sib)

	left := c.aux
	l.initNode(left, 0, l.low(img), sep, right, lockVersion(l.lockWord(img)))
	l.setLockWord(left, l.lockWord(img))
	for j := range h {
		k, v := entry(j)
		copy(l.leafKey(left, j), k)
		copy(l.leafVal(left, j), v)
	}
	setCount(left, h)
	c.charge(cost.Copy(n * l.leafEntry))
	wasRoot := l.coversAll(img)
	if err := c.write(right, sib); err != nil {
		return inner.JoinUnlock(fmt.Errorf("writing new data node %v: %w", right, err), c.unlock(a, l.lockWord(img)))
	}
	if err := c.writeBack(a, left); err != nil {
		return err
	}
	c.cn.splits.Add(1)
	if wasRoot {
		return c.growRoot(a, sep, right, 1)
	}
	return c.insertSeparator(sep, right, 1)
}

// allocData takes a data node from the compute node's free list, or
// allocates one on the memory nodes in turn, and returns the version its
// lock word starts at.
func (c *client) allocData() (transport.GAddr, uint64, error) {
	cn := c.cn
	cn.freeMu.Lock()
	if n := len(cn.free); n > 0 {
		p := cn.free[n-1]
		cn.free = cn.free[:n-1]
		cn.freeMu.Unlock()
		return p.addr, p.version + 1, nil
	}
	cn.freeMu.Unlock()
	c.flush()
	a, err := cn.alloc.Alloc(c.ep, uint64(c.x.l.nodeBytes), nodeAlign)
	if err != nil {
		return 0, 0, fmt.Errorf("allocating a data node: %w", err)
	}
	c.x.dataBytes.Add(uint64(c.x.l.nodeBytes))
	return a, 0, nil
}

// insertSeparator inserts (sep, child) into the internal node of level
// lvl that covers sep: the one this operation's route passed if it did,
// else one a walk from the root finds. It READs the node (checksum
// checked), locks it with a CAS from the version READ, and writes it back
// whole.
func (c *client) insertSeparator(sep []byte, child transport.GAddr, lvl int) error {
	l := &c.x.l
	if lvl >= inner.MaxLevels {
		return fmt.Errorf("tree taller than %d levels", inner.MaxLevels)
	}
	a := c.path[lvl]
	img := c.par
	for range maxRetries {
		if a == 0 {
			var err error
			if a, err = c.findInternal(sep, lvl); err != nil {
				return err
			}
		}
		if err := c.readNode(img, a); err != nil {
			return err
		}
		switch {
		case level(img) != lvl || compare(sep, l.low(img)) < 0:
			a = 0
			continue
		case !l.covers(img, sep):
			a = sibling(img)
			continue
		}
		ok, err := c.lock(a, l.lockWord(img))
		if err != nil {
			return err
		}
		if ok {
			return c.addToInner(a, img, sep, child)
		}
	}
	return fmt.Errorf("no level-%d node took separator %x after %d tries", lvl, sep, maxRetries)
}

// addToInner inserts (sep, child) into the locked internal node img at a
// and writes it back, splitting it when it fills: the new right node is
// claimed in the search layer and written first, then the shrunk node,
// then the separator goes one level up.
func (c *client) addToInner(a transport.GAddr, img, sep []byte, child transport.GAddr) error {
	l := &c.x.l
	c.charge(cost.NodeSearch(count(img)+1) + cost.Copy(l.nodeBytes))
	l.innerInsert(img, sep, child)
	if count(img) < l.innerCard {
		return c.writeBack(a, img)
	}
	n := count(img)
	m := n / 2
	lvl := level(img)
	up := append([]byte(nil), l.innerKey(img, m)...)
	right, err := c.allocInternal()
	if err != nil {
		return inner.JoinUnlock(err, c.unlock(a, l.lockWord(img)))
	}
	sib := c.sib
	l.initNode(sib, lvl, up, l.highOrNil(img), sibling(img), 0)
	l.setInnerChild(sib, 0, l.innerChild(img, m+1))
	for i := m + 1; i < n; i++ {
		l.innerInsert(sib, l.innerKey(img, i), l.innerChild(img, i+1))
	}
	c.seal(sib)

	wasRoot := l.coversAll(img)
	left := c.aux
	l.initNode(left, lvl, l.low(img), up, right, 0)
	l.setLockWord(left, l.lockWord(img))
	l.setInnerChild(left, 0, l.innerChild(img, 0))
	for i := range m {
		l.innerInsert(left, l.innerKey(img, i), l.innerChild(img, i+1))
	}
	c.charge(cost.Copy(l.nodeBytes))
	if err := c.write(right, sib); err != nil {
		return inner.JoinUnlock(fmt.Errorf("writing new internal node %v: %w", right, err), c.unlock(a, l.lockWord(img)))
	}
	if err := c.writeBack(a, left); err != nil {
		return err
	}
	if wasRoot {
		return c.growRoot(a, up, right, lvl+1)
	}
	return c.insertSeparator(up, right, lvl+1)
}

// growRoot installs a new root of level lvl over the old root left and its
// new sibling right: WRITE the root, then CAS the root word. If the CAS
// fails the node split was not the root (a data node that came to span
// the key space by merges) or another root is there already, and the
// separator goes into the level above like any other.
func (c *client) growRoot(left transport.GAddr, sep []byte, right transport.GAddr, lvl int) error {
	l := &c.x.l
	if lvl >= inner.MaxLevels {
		return fmt.Errorf("tree taller than %d levels", inner.MaxLevels)
	}
	a, err := c.allocInternal()
	if err != nil {
		return err
	}
	img := c.sib
	l.initNode(img, lvl, make([]byte, l.keySize), nil, 0, 0)
	l.setInnerChild(img, 0, left)
	l.innerInsert(img, sep, right)
	c.seal(img)
	if err := c.write(a, img); err != nil {
		return fmt.Errorf("writing new root %v: %w", a, err)
	}
	old, err := c.cas(c.x.rootPtr, inner.RootWord(left, lvl-1), inner.RootWord(a, lvl))
	if err != nil {
		return fmt.Errorf("installing new root %v: %w", a, err)
	}
	if old == inner.RootWord(left, lvl-1) {
		return nil
	}
	c.path[lvl] = 0
	return c.insertSeparator(sep, right, lvl)
}

// findInternal walks from the root word down to the internal node of
// level lvl covering key, by READs: for a separator whose level the
// operation's route did not pass (a tree that grew since the SLC was
// built). The READs are non-blocking, as the SLC's.
func (c *client) findInternal(key []byte, lvl int) (transport.GAddr, error) {
	x, l := c.x, &c.x.l
	for range maxRetries {
		if err := c.read(c.word[:], x.rootPtr); err != nil {
			return 0, fmt.Errorf("reading the root word: %w", err)
		}
		a, top := inner.DecodeRoot(getWord(c.word[:]))
		if top < lvl {
			continue // a new root is being installed above the old one
		}
		for cur := top; a != 0; {
			img, err := c.readInternal(a)
			if err != nil {
				return 0, err
			}
			if level(img) != cur {
				break
			}
			if !unbounded(img) && compare(key, l.high(img)) >= 0 {
				a = sibling(img)
				continue
			}
			if cur == lvl {
				return a, nil
			}
			n := x.usableKeys(img)
			c.charge(cost.NodeSearch(n + 1))
			a = l.innerChild(img, x.childFor(img, n, key))
			cur--
		}
	}
	return 0, fmt.Errorf("no level-%d node for %x after %d walks", lvl, key, maxRetries)
}
