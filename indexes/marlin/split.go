package marlin

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// Structure modifications. A leaf with no free slot to spare is rebuilt
// under the exclusive Spear: its live entries (tombstones dropped) and the
// new key, sorted, either fill the same leaf again when at most half of
// it (a compaction, which reclaims the slots of deleted keys) or are split
// at the middle, Sherman's way: the new right sibling is written first,
// then the shrunk leaf with the Spear's release in one batch, and only
// then is the separator inserted into the parent under the parent's own
// lock, so a writer never holds two locks. Readers that reach the old
// leaf with a key that moved follow its sibling pointer (B-link style).
// Internal nodes keep Sherman's CAS lock, embedded in their first word.

// leafEntry is one live slot of a leaf being rebuilt.
type leafEntry struct {
	key []byte
	ptr uint64
}

// splitLeaf rebuilds the leaf at loc, of which this client holds a share,
// with key's item p in it.
func (c *client) splitLeaf(loc location, key []byte, p uint64) error {
	l := &c.x.l
	img := c.buf[:l.leafBytes]
	ok, err := c.acquireExclusive(loc.addr, img)
	if err != nil {
		return err
	}
	if !ok {
		return errRestart
	}
	var live []leafEntry
	replaced := false
	for i := range l.span {
		ptr := l.slotPtr(img, i)
		if !isItem(ptr) {
			continue
		}
		e := leafEntry{key: l.slotKey(img, i), ptr: ptr}
		if bytes.Equal(e.key, key) {
			e.ptr, replaced = p, true
		}
		live = append(live, e)
	}
	if !replaced {
		live = append(live, leafEntry{key: key, ptr: p})
	}
	sort.Slice(live, func(a, b int) bool { return bytes.Compare(live[a].key, live[b].key) < 0 })
	c.charge(int64(len(live)) * cost.NodeSearch(len(live)))

	old := c.aux[:l.leafBytes]
	if len(live) <= l.span/2 {
		l.initNode(old, 0, l.low(img), l.highOrNil(img), sibling(img))
		old[offFront] = img[offFront]
		fillLeaf(l, old, live)
		setConsistent(old)
		c.ops = append(c.ops[:0], transport.WriteOp(loc.addr.Add(offFront), old[offFront:]), releaseExclusiveOp(loc.addr))
		if err := c.post(c.ops); err != nil {
			return fmt.Errorf("writing compacted leaf %v: %w", loc.addr, err)
		}
		return nil
	}
	m := len(live) / 2
	sep := bytes.Clone(live[m].key)
	sibAddr, err := c.allocNode(l.leafBytes)
	if err != nil {
		return joinRelease(err, c.post([]transport.Op{releaseExclusiveOp(loc.addr)}))
	}
	sib := c.sib[:l.leafBytes]
	l.initNode(sib, 0, sep, l.highOrNil(img), sibling(img))
	fillLeaf(l, sib, live[m:])
	setConsistent(sib)

	l.initNode(old, 0, l.low(img), sep, sibAddr)
	old[offFront] = img[offFront]
	fillLeaf(l, old, live[:m])
	setConsistent(old)
	wasRoot := l.coversAll(img)
	if err := c.write(sibAddr, sib); err != nil {
		return joinRelease(fmt.Errorf("writing new leaf %v: %w", sibAddr, err), c.post([]transport.Op{releaseExclusiveOp(loc.addr)}))
	}
	c.ops = append(c.ops[:0], transport.WriteOp(loc.addr.Add(offFront), old[offFront:]), releaseExclusiveOp(loc.addr))
	if err := c.post(c.ops); err != nil {
		return fmt.Errorf("writing split leaf %v: %w", loc.addr, err)
	}
	if wasRoot {
		return c.growRoot(loc.addr, sep, sibAddr, 1)
	}
	return c.insertSeparator(sep, sibAddr, 1)
}

// fillLeaf writes entries into the first slots of leaf image b.
func fillLeaf(l *layout, b []byte, entries []leafEntry) {
	for i, e := range entries {
		l.setSlotPtr(b, i, e.ptr)
		copy(l.slotKey(b, i), e.key)
	}
}

// lockInner takes the embedded CAS lock of the internal node at a and
// READs the node into img (Sherman's lock_and_read_page).
func (c *client) lockInner(a transport.GAddr, img []byte) error {
	for i := range maxRetries {
		if i > 0 {
			c.backoff()
		}
		got, err := c.cas(a.Add(offLock), 0, c.tag)
		if err != nil {
			return fmt.Errorf("locking node %v: %w", a, err)
		}
		if got == 0 {
			if err := c.read(img, a); err != nil {
				return joinRelease(fmt.Errorf("reading node %v: %w", a, err), c.unlockInner(a))
			}
			return nil
		}
	}
	return fmt.Errorf("node %v still locked after %d CASes", a, maxRetries)
}

// unlockInner lands ops (the node's WRITE) and then the WRITE of a zero
// lock word, in one batch (Sherman's write_page_and_unlock).
func (c *client) unlockInner(a transport.GAddr, ops ...transport.Op) error {
	var zero [8]byte
	c.ops = append(append(c.ops[:0], ops...), transport.WriteOp(a.Add(offLock), zero[:]))
	if err := c.post(c.ops); err != nil {
		return fmt.Errorf("writing and unlocking node %v: %w", a, err)
	}
	return nil
}

// insertSeparator inserts (sep, child) into the node of level lvl that
// covers sep: the one this operation passed on its way down if it did,
// else the one a new traversal finds (Sherman's insert_internal).
func (c *client) insertSeparator(sep []byte, child transport.GAddr, lvl int) error {
	l := &c.x.l
	if lvl >= maxLevels {
		return fmt.Errorf("tree taller than %d levels", maxLevels)
	}
	loc := location{addr: c.path[lvl].addr}
	for range maxRetries {
		if loc.addr == 0 {
			var err error
			if loc, err = c.locate(sep, lvl, true); err != nil {
				return err
			}
		}
		img := c.buf[:l.innerBytes]
		locked := loc.addr
		if err := c.lockInner(locked, img); err != nil {
			return err
		}
		switch {
		case level(img) != lvl || bytes.Compare(sep, l.low(img)) < 0:
			c.dropParent(&loc)
			loc = location{}
		case !l.covers(img, sep):
			loc = location{addr: sibling(img)}
		default:
			if loc.isRoot && !l.coversAll(img) {
				c.forgetRoot()
			}
			return c.addToInner(loc, img, sep, child)
		}
		if err := c.unlockInner(locked); err != nil {
			return err
		}
	}
	return fmt.Errorf("no stable level-%d node for separator %x after %d tries", lvl, sep, maxRetries)
}

// addToInner inserts (sep, child) into the locked internal node img and
// writes it back whole, splitting it when it fills.
func (c *client) addToInner(loc location, img, sep []byte, child transport.GAddr) error {
	l := &c.x.l
	c.charge(cost.NodeSearch(count(img) + 1))
	l.insertInner(img, sep, child)
	binary.LittleEndian.PutUint64(img[offLock:], 0)
	if count(img) < l.span {
		setConsistent(img)
		if err := c.unlockInner(loc.addr, transport.WriteOp(loc.addr.Add(offFront), img[offFront:])); err != nil {
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
		return joinRelease(err, c.unlockInner(loc.addr))
	}
	sib := c.sib[:l.innerBytes]
	l.initNode(sib, lvl, up, l.highOrNil(img), sibling(img))
	l.setInnerChild(sib, 0, l.innerChild(img, m+1))
	for i := m + 1; i < n; i++ {
		l.insertInner(sib, l.innerKey(img, i), l.innerChild(img, i+1))
	}
	setConsistent(sib)

	wasRoot := l.coversAll(img)
	old := c.aux[:l.innerBytes]
	l.initNode(old, lvl, l.low(img), up, sibAddr)
	old[offFront] = img[offFront]
	copy(old[offLeftmost:offLeftmost+8], img[offLeftmost:offLeftmost+8])
	copy(old[l.hdr:l.hdr+m*l.innerEntry], img[l.hdr:l.hdr+m*l.innerEntry])
	setCount(old, m)
	setConsistent(old)
	c.charge(cost.Copy(len(img)))

	if err := c.write(sibAddr, sib); err != nil {
		return joinRelease(fmt.Errorf("writing new node %v: %w", sibAddr, err), c.unlockInner(loc.addr))
	}
	if err := c.unlockInner(loc.addr, transport.WriteOp(loc.addr.Add(offFront), old[offFront:])); err != nil {
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
	setConsistent(img)
	if err := c.write(a, img); err != nil {
		return fmt.Errorf("writing new root %v: %w", a, err)
	}
	old, err := c.cas(c.x.rootPtr, rootWord(left, lvl-1), rootWord(a, lvl))
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
