package sherman

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// Structure modifications, as Sherman's code makes them: a node that
// fills up is split while it is locked: the new right sibling is written
// first, then the shrunk node with its unlock in one batch; only then is
// the separator inserted into the parent, under the parent's own lock,
// so a writer never holds two locks. Readers that reach the old node
// with a key that moved follow its sibling pointer meanwhile (B-link
// style).

// splitLeaf splits the locked, full leaf img (which already holds the new
// entry): sorted by key, the upper half goes to a new sibling.
func (c *client) splitLeaf(h held, loc location, img []byte) error {
	l := &c.x.l
	idx := make([]int, 0, l.leafCard)
	for i := range l.leafCard {
		if entryValid(l.entry(img, i)) {
			idx = append(idx, i)
		}
	}
	sort.Slice(idx, func(a, b int) bool {
		return bytes.Compare(l.entryKey(l.entry(img, idx[a])), l.entryKey(l.entry(img, idx[b]))) < 0
	})
	c.charge(int64(len(idx)) * cost.NodeSearch(len(idx)))
	m, sep := c.leafSplitPoint(img, idx)
	sep = bytes.Clone(sep)

	sibAddr, err := c.allocNode(l.leafBytes)
	if err != nil {
		return joinUnlock(err, c.unlock(h))
	}
	sib := c.sib[:l.leafBytes]
	l.initNode(sib, 0, sep, l.highOrNil(img), sibling(img))
	for j, i := range idx[m:] {
		copy(l.entry(sib, j), l.entry(img, i))
	}
	l.setConsistent(sib)

	old := c.aux[:l.leafBytes]
	l.initNode(old, 0, l.low(img), sep, sibAddr)
	old[offFront] = img[offFront]
	for j, i := range idx[:m] {
		copy(l.entry(old, j), l.entry(img, i))
	}
	l.setConsistent(old)
	wasRoot := l.coversAll(img)
	if c.x.consistency == crc {
		c.chargeCRC(2 * cost.Checksum(len(img)-8))
	}
	if err := c.write(sibAddr, sib); err != nil {
		return joinUnlock(fmt.Errorf("writing new leaf %v: %w", sibAddr, err), c.unlock(h))
	}
	if err := c.unlock(h, c.writes(transport.WriteOp(loc.addr, old))...); err != nil {
		return err
	}
	if wasRoot {
		return c.growRoot(loc.addr, sep, sibAddr, 1)
	}
	return c.insertSeparator(sep, sibAddr, 1)
}

// leafSplitPoint picks where the sorted entries idx of img split: at the
// middle, as Sherman does, or in P-Sherman at the partition bound closest
// to the middle when the entries straddle one, so that leaves come to lie
// inside one partition and need no RDMA synchronisation (DEX picks
// partition bounds to that end; a runtime split is where a tree grown
// without a bulk load gets them).
func (c *client) leafSplitPoint(img []byte, idx []int) (int, []byte) {
	l := &c.x.l
	key := func(j int) []byte { return l.entryKey(l.entry(img, idx[j])) }
	m := len(idx) / 2
	sep := key(m)
	best := -1
	for _, b := range c.x.parts.boundsIn(key(0), key(len(idx)-1)) {
		j := sort.Search(len(idx), func(j int) bool { return bytes.Compare(key(j), b) >= 0 })
		if best < 0 || abs(j-len(idx)/2) < abs(best-len(idx)/2) {
			best, sep = j, b
		}
	}
	if best >= 0 {
		m = best
	}
	return m, sep
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// insertSeparator inserts (sep, child) into the node of level lvl that
// covers sep: the one this operation passed on its way down if it did,
// else the one a new traversal finds (Sherman's insert_internal).
func (c *client) insertSeparator(sep []byte, child transport.GAddr, lvl int) error {
	l := &c.x.l
	if lvl >= maxLevels {
		return fmt.Errorf("tree taller than %d levels", maxLevels)
	}
	loc := location{addr: c.path[lvl].addr, rng: c.path[lvl].rng}
	for range maxRetries {
		if loc.addr == 0 {
			var err error
			if loc, err = c.locate(sep, lvl, true); err != nil {
				return err
			}
		}
		h, err := c.lock(loc.addr, c.classOf(loc.rng))
		if err != nil {
			return err
		}
		img := c.buf[:l.innerBytes]
		if err := c.read(img, loc.addr); err != nil {
			return joinUnlock(fmt.Errorf("reading node %v: %w", loc.addr, err), c.unlock(h))
		}
		switch {
		case level(img) != lvl || bytes.Compare(sep, l.low(img)) < 0:
			c.dropParent(&loc)
			loc = location{}
		case !l.covers(img, sep):
			loc = location{addr: sibling(img), rng: keyRange{lo: bytes.Clone(l.high(img))}}
		default:
			if loc.isRoot && !l.coversAll(img) {
				c.forgetRoot()
			}
			return c.addToInner(h, loc, img, sep, child)
		}
		if err := c.unlock(h); err != nil {
			return err
		}
	}
	return fmt.Errorf("no stable level-%d node for separator %x after %d tries", lvl, sep, maxRetries)
}

// addToInner inserts (sep, child) into the locked internal node img and
// writes it back whole, as Sherman's internal_page_store does, splitting
// it when it fills.
func (c *client) addToInner(h held, loc location, img, sep []byte, child transport.GAddr) error {
	l := &c.x.l
	c.charge(cost.NodeSearch(count(img) + 1))
	l.insertInner(img, sep, child)
	if count(img) < l.innerCard {
		l.setConsistent(img)
		c.chargeSeal(1)
		if err := c.unlock(h, c.writes(transport.WriteOp(loc.addr, img))...); err != nil {
			return err
		}
		c.cacheInsert(loc.addr, img)
		return nil
	}
	n := count(img)
	m := n / 2
	lvl := level(img)
	up := bytes.Clone(l.innerKey(img, m))
	sibAddr, err := c.allocNode(l.innerBytes)
	if err != nil {
		return joinUnlock(err, c.unlock(h))
	}
	sib := c.sib[:l.innerBytes]
	l.initNode(sib, lvl, up, l.highOrNil(img), sibling(img))
	l.setInnerChild(sib, 0, l.innerChild(img, m+1))
	for i := m + 1; i < n; i++ {
		l.insertInner(sib, l.innerKey(img, i), l.innerChild(img, i+1))
	}
	l.setConsistent(sib)

	wasRoot := l.coversAll(img)
	old := c.aux[:l.innerBytes]
	l.initNode(old, lvl, l.low(img), up, sibAddr)
	old[offFront] = img[offFront]
	copy(old[offLeftmost:offLeftmost+8], img[offLeftmost:offLeftmost+8])
	copy(old[l.hdr:l.hdr+m*l.innerEntry], img[l.hdr:l.hdr+m*l.innerEntry])
	setCount(old, m)
	l.setConsistent(old)
	c.chargeSeal(2)
	c.charge(cost.Copy(len(img)))

	if err := c.write(sibAddr, sib); err != nil {
		return joinUnlock(fmt.Errorf("writing new node %v: %w", sibAddr, err), c.unlock(h))
	}
	if err := c.unlock(h, c.writes(transport.WriteOp(loc.addr, old))...); err != nil {
		return err
	}
	c.cacheInsert(sibAddr, sib)
	c.cacheInsert(loc.addr, old)
	if wasRoot {
		return c.growRoot(loc.addr, up, sibAddr, lvl+1)
	}
	return c.insertSeparator(up, sibAddr, lvl+1)
}

// growRoot installs a new root of level lvl over the old root left and
// its new sibling right: WRITE the root, then CAS the root pointer. If the
// CAS fails another root is already there, and the separator goes into it
// like any other.
func (c *client) growRoot(left transport.GAddr, sep []byte, right transport.GAddr, lvl int) error {
	l := &c.x.l
	if lvl >= maxLevels {
		return fmt.Errorf("tree taller than %d levels", maxLevels)
	}
	a, err := c.allocNode(l.innerBytes)
	if err != nil {
		return err
	}
	img := c.sib[:l.innerBytes]
	l.initNode(img, lvl, make([]byte, l.keySize), nil, 0)
	l.setInnerChild(img, 0, left)
	l.insertInner(img, sep, right)
	l.setConsistent(img)
	c.chargeSeal(1)
	if err := c.write(a, img); err != nil {
		return fmt.Errorf("writing new root %v: %w", a, err)
	}
	c.flush()
	old, err := c.ep.CAS(c.x.rootPtr, rootWord(left, lvl-1), rootWord(a, lvl))
	if err != nil {
		return fmt.Errorf("installing new root %v: %w", a, err)
	}
	if old == rootWord(left, lvl-1) {
		c.setRoot(a, lvl)
		c.cacheInsert(a, img)
		return nil
	}
	c.forgetRoot()
	c.path[lvl] = step{}
	return c.insertSeparator(sep, right, lvl)
}

// chargeSeal charges the checksums of n whole-node writes in the crc
// variant.
func (c *client) chargeSeal(n int) {
	if c.x.consistency == crc {
		c.chargeCRC(int64(n) * cost.Checksum(c.x.l.innerBytes-8))
	}
}

// allocNode allocates a node on the memory nodes in turn.
func (c *client) allocNode(size int) (transport.GAddr, error) {
	c.flush()
	a, err := c.x.allocs[c.x.cn(c.ep.Node())].Alloc(c.ep, uint64(size), nodeAlign)
	if err != nil {
		return 0, fmt.Errorf("allocating a node: %w", err)
	}
	c.x.nodeBytes.Add(uint64(size))
	return a, nil
}

// joinUnlock reports an error that ended an operation together with any
// error of the unlock that followed it.
func joinUnlock(err, unlockErr error) error {
	if unlockErr != nil {
		return fmt.Errorf("%w (and unlocking: %v)", err, unlockErr)
	}
	return err
}
