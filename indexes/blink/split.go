package blink

import (
	"bytes"
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes/internal/inner"
	"github.com/dmbench/dmbench/transport"
)

// splitLeaf is the B-link half split of the locked, full leaf a (image
// c.lk) that key and val go into at entry i: the upper half moves to a new
// right sibling, which is written first, then the leaf, narrowed to the
// separator and linked to it, is written whole and unlocked. Readers that
// still come to the leaf for a moved key go right. It returns the
// separator and the new node, for the caller to insert into the parent
// with no lock held.
func (c *client) splitLeaf(a transport.GAddr, i int, key, val []byte) ([]byte, transport.GAddr, error) {
	l := &c.x.l
	img := c.lk
	n := count(img)
	e := l.leafEntry
	ents := make([]byte, (n+1)*e)
	copy(ents, img[l.hdr:l.hdr+i*e])
	copy(ents[i*e:], key)
	copy(ents[i*e+l.keySize:], val)
	copy(ents[(i+1)*e:], img[l.hdr+i*e:l.hdr+n*e])
	mid := (n + 1) / 2
	sep := bytes.Clone(ents[mid*e : mid*e+l.keySize])

	right := c.sib
	l.initNode(right, 0, sep, l.highOrNil(img), sibling(img))
	copy(right[l.hdr:], ents[mid*e:])
	setCount(right, n+1-mid)
	clear(img[l.hdr : l.size-rearBytes])
	copy(img[l.hdr:], ents[:mid*e])
	setCount(img, mid)
	c.charge(cost.Copy(2 * l.size))

	newA, err := c.halfSplit(a, img, right, sep)
	return sep, newA, err
}

// splitInner splits the locked, full internal node a (image c.lk) while
// adding separator sep with child: the middle key goes up, the keys above
// it move to a new right sibling. It returns the key that goes up and the
// new node.
func (c *client) splitInner(a transport.GAddr, sep []byte, child transport.GAddr) ([]byte, transport.GAddr, error) {
	l := &c.x.l
	img := c.lk
	ie := l.innerEntry
	// One key more than a node holds, in a longer scratch image.
	big := make([]byte, l.size+ie)
	copy(big, img)
	if !l.innerInsert(big, sep, child) {
		return nil, 0, c.duplicateSeparator(a, sep)
	}
	n := count(big)
	m := n / 2
	up := bytes.Clone(l.innerKey(big, m))
	entries := l.hdr + 8

	right := c.sib
	l.initNode(right, level(img), up, l.highOrNil(img), sibling(img))
	l.setInnerChild(right, 0, l.innerChild(big, m+1))
	copy(right[entries:], big[entries+(m+1)*ie:entries+n*ie])
	setCount(right, n-m-1)
	clear(img[entries : l.size-rearBytes])
	copy(img[entries:], big[entries:entries+m*ie])
	setCount(img, m)
	c.charge(cost.Copy(2 * l.size))

	newA, err := c.halfSplit(a, img, right, up)
	return up, newA, err
}

// halfSplit writes the new right half of node a, then a itself (image
// img, locked) with high fence sep and the new node as its sibling, which
// unlocks it.
func (c *client) halfSplit(a transport.GAddr, img, right, sep []byte) (transport.GAddr, error) {
	l := &c.x.l
	newA, err := c.x.allocNode(c.ep, c.alloc)
	if err != nil {
		return 0, fmt.Errorf("allocating a node: %w", err)
	}
	seal(right, 1)
	c.chargeCRC(cost.Checksum(len(right)))
	if err := c.write(newA, right); err != nil {
		return 0, fmt.Errorf("writing new node %v: %w", newA, err)
	}
	l.setHigh(img, sep)
	setSibling(img, newA)
	return newA, c.release(a, img)
}

// newRoot publishes a root of level lvl over left, the root until now, and
// its new right half: one WRITE of the new node and a CAS of the root
// pointer. It reports false if another client's new root won the CAS (the
// node written is then never used: memory is never freed, as in Sherman).
func (c *client) newRoot(lvl int, sep []byte, left, right transport.GAddr) (bool, error) {
	l := &c.x.l
	img := c.root
	l.initNode(img, lvl, make([]byte, l.keySize), nil, 0)
	l.setInnerChild(img, 0, left)
	l.innerInsert(img, sep, right)
	seal(img, 1)
	c.chargeCRC(cost.Checksum(len(img)))
	a, err := c.x.allocNode(c.ep, c.alloc)
	if err != nil {
		return false, fmt.Errorf("allocating a root: %w", err)
	}
	if err := c.write(a, img); err != nil {
		return false, fmt.Errorf("writing new root %v: %w", a, err)
	}
	c.flush()
	expect := inner.RootWord(left, lvl-1)
	old, err := c.ep.CAS(c.x.rootPtr, expect, inner.RootWord(a, lvl))
	if err != nil {
		return false, fmt.Errorf("publishing new root %v: %w", a, err)
	}
	return old == expect, nil
}

// duplicateSeparator unlocks internal node a and reports a separator that
// is there already: every split makes a fresh one, so this is a bug.
func (c *client) duplicateSeparator(a transport.GAddr, sep []byte) error {
	if err := c.unlock(a, version(c.lk)); err != nil {
		return err
	}
	return fmt.Errorf("separator %x is in node %v already", sep, a)
}
