package marlin

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"sort"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/internal/inner"
	"github.com/dmbench/dmbench/transport"
)

// Get reads the leaf covering key, then the item its slot points to: two
// READs with a warm cache.
func (c *client) Get(key []byte) (val []byte, found bool, err error) {
	l := &c.x.l
	err = c.AtLeaf(key, func(loc *inner.Location, hops int) (bool, error) {
		img := c.Buf[:l.leafBytes]
		if err := c.readNode(img, loc.Addr); err != nil {
			return false, err
		}
		if next, err := c.Arrive(loc, img, key, hops); next || err != nil {
			return next, err
		}
		i := c.findKey(img, key)
		if i < 0 || !isItem(l.slotPtr(img, i)) {
			return false, nil
		}
		if err := c.readItem(l.slotPtr(img, i), key); err != nil {
			return false, err
		}
		val, found = bytes.Clone(l.itemVal(c.item)), true
		return false, nil
	})
	return val, found, err
}

// readItem READs the item at p into c.item and checks that it is key's.
func (c *client) readItem(p uint64, key []byte) error {
	l := &c.x.l
	a := transport.GAddr(p &^ pendingBit)
	if err := c.Read(c.item, a); err != nil {
		return fmt.Errorf("reading item %v: %w", a, err)
	}
	if !l.itemValid(c.item) || !bytes.Equal(l.itemKey(c.item), key) {
		return fmt.Errorf("item %v holds key %x, not %x", a, l.itemKey(c.item), key)
	}
	return nil
}

// readNode READs the node at addr into buf until the image is consistent
// (no structure change writing it, versions equal).
func (c *client) readNode(buf []byte, addr transport.GAddr) error {
	for i := range inner.MaxRetries {
		if i > 0 {
			c.backoff()
		}
		if err := c.Read(buf, addr); err != nil {
			return fmt.Errorf("reading node %v: %w", addr, err)
		}
		if consistent(buf) {
			return nil
		}
	}
	return fmt.Errorf("node %v still inconsistent after %d reads", addr, inner.MaxRetries)
}

// ReadNode is readNode for the internal-node layer, to which Marlin's
// check does not depend on the node's range.
func (c *client) ReadNode(buf []byte, addr transport.GAddr, _ inner.KeyRange) error {
	return c.readNode(buf, addr)
}

// findKey returns the slot of leaf image img whose final key is key (its
// pointer an item or a tombstone), or -1, by a linear scan of the
// unsorted slots as Sherman's leaf search.
func (c *client) findKey(img, key []byte) int {
	l := &c.x.l
	for i := range l.span {
		if keyed(l.slotPtr(img, i)) && bytes.Equal(l.slotKey(img, i), key) {
			c.Charge(cost.LinearScan(i + 1))
			return i
		}
	}
	c.Charge(cost.LinearScan(l.span))
	return -1
}

// Put inserts, updates or deletes key in its leaf under a shared Spear:
// [FAA +1, READ leaf], then the slot's verbs, then FAA -1.
func (c *client) Put(key, val []byte, kind indexes.WriteKind) error {
	l := &c.x.l
	c.itemAddr = 0
	return c.AtLeaf(key, func(loc *inner.Location, hops int) (bool, error) {
		img := c.Buf[:l.leafBytes]
		held := loc.Addr
		if err := c.acquireShared(held, img); err != nil {
			return false, err
		}
		if next, err := c.Arrive(loc, img, key, hops); next || err != nil {
			// Arrive moved loc on: release the leaf held.
			if rerr := c.releaseShared(held); rerr != nil {
				return false, rerr
			}
			return next, err
		}
		return false, c.modifyLeaf(*loc, img, key, val, kind)
	})
}

// modifyLeaf applies the operation to the leaf at loc, whose image img
// was read under this client's share of its Spear, and releases it.
func (c *client) modifyLeaf(loc inner.Location, img, key, val []byte, kind indexes.WriteKind) error {
	l := &c.x.l
	i := c.findKey(img, key)
	if kind == indexes.WriteDelete {
		if i < 0 || !isItem(l.slotPtr(img, i)) {
			return inner.JoinUnlock(indexes.ErrNotFound, c.releaseShared(loc.Addr))
		}
		return c.swapSlot(loc.Addr, i, l.slotPtr(img, i), slotTombstone, false)
	}
	if kind == indexes.WriteUpdate && (i < 0 || !isItem(l.slotPtr(img, i))) {
		return inner.JoinUnlock(indexes.ErrNotFound, c.releaseShared(loc.Addr))
	}
	p, err := c.writeItem(key, val)
	if err != nil {
		return inner.JoinUnlock(err, c.releaseShared(loc.Addr))
	}
	if i >= 0 {
		return c.swapSlot(loc.Addr, i, l.slotPtr(img, i), p, kind == indexes.WriteInsert)
	}
	return c.insertNew(loc, img, key, p)
}

// swapSlot CASes slot i of the leaf at addr from old to p and releases the
// Spear. A CAS that loses to another IDU retries with the value it
// returned, as Marlin does; a slot found tombstoned was deleted meanwhile,
// which an update or delete reports as indexes.ErrNotFound and an insert
// (revive) overwrites.
func (c *client) swapSlot(addr transport.GAddr, i int, old, p uint64, revive bool) error {
	a := addr.Add(c.x.l.slotOffset(i))
	for range inner.MaxRetries {
		got, err := c.CAS(a, old, p)
		if err != nil {
			return inner.JoinUnlock(fmt.Errorf("swapping slot %v: %w", a, err), c.releaseShared(addr))
		}
		if got == old {
			return c.releaseShared(addr)
		}
		if got == slotTombstone && !revive {
			return inner.JoinUnlock(indexes.ErrNotFound, c.releaseShared(addr))
		}
		old = got
	}
	return inner.JoinUnlock(fmt.Errorf("slot %v still changing after %d CASes", a, inner.MaxRetries), c.releaseShared(addr))
}

// writeItem allocates and WRITEs this operation's data item (once per
// operation, however often it retries) and returns its address.
func (c *client) writeItem(key, val []byte) (uint64, error) {
	if c.itemAddr != 0 {
		return c.itemAddr, nil
	}
	l := &c.x.l
	c.Flush()
	a, err := c.x.tree.Alloc(c.EP.Node()).Alloc(c.EP, uint64(l.itemBytes), itemAlign)
	if err != nil {
		return 0, fmt.Errorf("allocating an item: %w", err)
	}
	c.x.itemBytes.Add(uint64(l.itemBytes))
	l.fillItem(c.item, key, val)
	if err := c.Write(a, c.item); err != nil {
		return 0, fmt.Errorf("writing item %v: %w", a, err)
	}
	c.itemAddr = uint64(a)
	return c.itemAddr, nil
}

// insertNew puts a key the leaf image does not hold into a free slot: CAS
// the slot's pointer from free to the item marked pending, then WRITE the
// key, WRITE the final pointer and release the Spear in one batch (one QP
// lands them in order, so a reader that sees the final pointer sees the
// key). Concurrent inserts of one key must end in one slot: every insert
// of a key tries the free slots in the same cyclic order (from the key's
// home slot) and learns the key of every pending slot it meets from its
// item, and one that finds its key pending waits for that insert to land
// and then replaces its pointer; since a slot is claimed at most once
// between rebuilds, the first insert's slot is one the second had to pass.
// A leaf with one free slot or none is split (or compacted) instead.
func (c *client) insertNew(loc inner.Location, img, key []byte, p uint64) error {
	l := &c.x.l
	for range inner.MaxRetries {
		var free, pending []int
		for i := range l.span {
			switch ptr := l.slotPtr(img, i); {
			case ptr == slotFree:
				free = append(free, i)
			case ptr&pendingBit != 0:
				pending = append(pending, i)
			}
		}
		c.Charge(cost.LinearScan(l.span))
		mine, err := c.pendingFor(img, pending, key)
		if err != nil {
			return inner.JoinUnlock(err, c.releaseShared(loc.Addr))
		}
		switch {
		case mine:
			// Wait for the other insert of key to land.
			c.backoff()
		case len(free) <= 1:
			return c.splitLeaf(loc, key, p)
		default:
			claimed, err := c.claim(loc.Addr, free, key, p)
			if err != nil || claimed {
				return err
			}
		}
		if err := c.Read(img, loc.Addr); err != nil {
			return inner.JoinUnlock(fmt.Errorf("reading leaf %v: %w", loc.Addr, err), c.releaseShared(loc.Addr))
		}
		if i := c.findKey(img, key); i >= 0 {
			return c.swapSlot(loc.Addr, i, l.slotPtr(img, i), p, true)
		}
	}
	return inner.JoinUnlock(fmt.Errorf("leaf %v: no slot after %d tries", loc.Addr, inner.MaxRetries), c.releaseShared(loc.Addr))
}

// pendingFor READs the items of the pending slots of img in one batch and
// reports whether one of them is key's.
func (c *client) pendingFor(img []byte, pending []int, key []byte) (bool, error) {
	if len(pending) == 0 {
		return false, nil
	}
	l := &c.x.l
	items := make([]byte, len(pending)*l.itemBytes)
	c.ops = c.ops[:0]
	for j, i := range pending {
		a := transport.GAddr(l.slotPtr(img, i) &^ pendingBit)
		c.ops = append(c.ops, transport.ReadOp(items[j*l.itemBytes:(j+1)*l.itemBytes], a))
	}
	if err := c.post(c.ops); err != nil {
		return false, fmt.Errorf("reading %d pending items: %w", len(pending), err)
	}
	for j := range pending {
		if bytes.Equal(l.itemKey(items[j*l.itemBytes:]), key) {
			return true, nil
		}
	}
	return false, nil
}

// claim CASes the first free slot at or after the key's home slot (a hash
// of the key, wrapping around): concurrent inserts of different keys into
// one leaf rarely race for one slot, while inserts of one key try the
// slots in the same order. The caller leaves at least one free slot for
// the split. claim returns true once the key is in (and the Spear
// released), false when the CAS lost: the caller reads the leaf again to
// learn whose the slot is.
func (c *client) claim(addr transport.GAddr, free []int, key []byte, p uint64) (bool, error) {
	l := &c.x.l
	c.Charge(cost.HashKey())
	h := fnv.New64a()
	h.Write(key)
	home := int(h.Sum64() % uint64(l.span))
	i := free[sort.SearchInts(free, home)%len(free)]
	a := addr.Add(l.slotOffset(i))
	got, err := c.CAS(a, slotFree, p|pendingBit)
	if err != nil {
		return false, inner.JoinUnlock(fmt.Errorf("claiming slot %v: %w", a, err), c.releaseShared(addr))
	}
	if got != slotFree {
		return false, nil
	}
	var ptr [8]byte
	binary.LittleEndian.PutUint64(ptr[:], p)
	c.ops = append(c.ops[:0],
		transport.WriteOp(a.Add(8), key),
		transport.WriteOp(a, ptr[:]),
		releaseSharedOp(addr))
	if err := c.post(c.ops); err != nil {
		return false, fmt.Errorf("writing slot %v: %w", a, err)
	}
	return true, nil
}
