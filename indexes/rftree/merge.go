package rftree

import (
	"bytes"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes/internal/inner"
	"github.com/dmbench/dmbench/transport"
)

// Merges (section 3.3.4): a delete that leaves a data node underfull
// merges the node's right sibling into it when the two fit in one node.
// The merging client holds the underfull node L; it locks the parent P
// that lists the sibling R (READ with checksum, CAS), then R (READ, CAS),
// each with a CAS that does not wait: if either is busy, or P does not
// list R right after L, or R has changed, there is no merge this time and
// L is written back as it is. Otherwise it writes R deleted, its sibling
// pointer turned to L (readers that reach R follow it to L; a key of R
// is meanwhile in neither, and they spin on the two), then L holding both
// halves, then P without R's entry, and puts R on the compute node's free
// list. Parent first, so that R is never freed while P still lists it.
// Internal nodes never merge (the paper describes merges of data nodes).

// merge writes back the locked data node img at a, merged with its right
// sibling when it can be.
func (c *client) merge(a transport.GAddr, img []byte) error {
	l := &c.x.l
	r := sibling(img)
	p := c.path[1]
	if p == 0 || r == 0 {
		return c.writeBack(a, img)
	}
	par := c.par
	if err := c.readNode(par, p); err != nil {
		return inner.JoinUnlock(err, c.unlock(a, l.lockWord(img)))
	}
	j := c.parentSlot(par, a, r, l.high(img))
	if j < 0 {
		return c.writeBack(a, img)
	}
	pw := l.lockWord(par)
	ok, err := c.lock(p, pw)
	if err != nil {
		return inner.JoinUnlock(err, c.unlock(a, l.lockWord(img)))
	}
	if !ok {
		return c.writeBack(a, img)
	}
	sib := c.sib
	if err := c.readNode(sib, r); err != nil {
		return inner.JoinUnlock(err, c.unlock(p, pw))
	}
	rw := l.lockWord(sib)
	fits := level(sib) == 0 && !deleted(sib) && bytes.Equal(l.low(sib), l.high(img)) &&
		count(img)+count(sib) <= l.leafCard
	if fits {
		if ok, err = c.lock(r, rw); err != nil {
			return inner.JoinUnlock(err, c.unlock(p, pw))
		}
	}
	if !fits || !ok {
		if err := c.unlock(p, pw); err != nil {
			return err
		}
		return c.writeBack(a, img)
	}
	next := sibling(sib)
	n := count(img)
	for i := range count(sib) {
		copy(l.leafKey(img, n+i), l.leafKey(sib, i))
		copy(l.leafVal(img, n+i), l.leafVal(sib, i))
	}
	setCount(img, n+count(sib))
	l.setHigh(img, l.highOrNil(sib))
	setSibling(img, next)
	c.charge(cost.Copy(count(sib) * l.leafEntry))

	sib[offFlags] |= flagDeleted
	setSibling(sib, a)
	l.setLockWord(sib, lockWordOf(lockVersion(rw), c.tag))
	if err := c.writeBack(r, sib); err != nil {
		return err
	}
	if err := c.writeBack(a, img); err != nil {
		return err
	}
	l.setLockWord(par, lockWordOf(lockVersion(pw), c.tag))
	l.innerRemove(par, j)
	c.charge(cost.Copy(l.nodeBytes))
	if err := c.writeBack(p, par); err != nil {
		return err
	}
	c.cn.freeMu.Lock()
	c.cn.free = append(c.cn.free, freePage{addr: r, version: lockVersion(rw) + 1})
	c.cn.freeMu.Unlock()
	c.cn.merges.Add(1)
	return nil
}

// parentSlot finds, in level-1 node par, the entry of r (key low, child r)
// right after child a: the entry a merge removes. -1 if par does not list
// them so.
func (c *client) parentSlot(par []byte, a, r transport.GAddr, low []byte) int {
	l := &c.x.l
	if level(par) != 1 {
		return -1
	}
	n := min(count(par), l.innerCard)
	j := l.innerIndex(par, low) - 1
	c.charge(cost.NodeSearch(n + 1))
	if j < 0 || j >= n || !bytes.Equal(l.innerKey(par, j), low) ||
		l.innerChild(par, j+1) != r || l.innerChild(par, j) != a {
		return -1
	}
	return j
}
