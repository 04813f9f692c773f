package marlin

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

// errRestart starts a write over from the leaf lookup: another SMO held
// the leaf it meant to split.
var errRestart = errors.New("restart")

// search reads the leaf covering key, then the item its slot points to:
// two READs with a warm cache.
func (c *client) search(key []byte) ([]byte, bool, error) {
	l := &c.x.l
	fast := true
	for range maxRetries {
		loc, err := c.locate(key, 0, fast)
		if err != nil {
			return nil, false, err
		}
		for hops := 0; hops < maxRetries; hops++ {
			img := c.buf[:l.leafBytes]
			if err := c.readNode(img, loc.addr); err != nil {
				return nil, false, err
			}
			next, err := c.arrive(&loc, img, key, hops)
			if errors.Is(err, errStale) {
				break
			}
			if next {
				continue
			}
			i := c.findKey(img, key)
			if i < 0 || !isItem(l.slotPtr(img, i)) {
				return nil, false, nil
			}
			if err := c.readItem(l.slotPtr(img, i), key); err != nil {
				return nil, false, err
			}
			return bytes.Clone(l.itemVal(c.item)), true, nil
		}
		fast = false
	}
	return nil, false, fmt.Errorf("no stable leaf after %d restarts", maxRetries)
}

// readItem READs the item at p into c.item and checks that it is key's.
func (c *client) readItem(p uint64, key []byte) error {
	l := &c.x.l
	a := transport.GAddr(p &^ pendingBit)
	if err := c.read(c.item, a); err != nil {
		return fmt.Errorf("reading item %v: %w", a, err)
	}
	if !l.itemValid(c.item) || !bytes.Equal(l.itemKey(c.item), key) {
		return fmt.Errorf("item %v holds key %x, not %x", a, l.itemKey(c.item), key)
	}
	return nil
}

// findKey returns the slot of leaf image img whose final key is key (its
// pointer an item or a tombstone), or -1, by a linear scan of the
// unsorted slots as Sherman's leaf search.
func (c *client) findKey(img, key []byte) int {
	l := &c.x.l
	for i := range l.span {
		if keyed(l.slotPtr(img, i)) && bytes.Equal(l.slotKey(img, i), key) {
			c.charge(cost.LinearScan(i + 1))
			return i
		}
	}
	c.charge(cost.LinearScan(l.span))
	return -1
}

type storeMode = indexes.WriteKind

const (
	modeInsert = indexes.WriteInsert
	modeUpdate = indexes.WriteUpdate
	modeDelete = indexes.WriteDelete
)

// store inserts, updates or deletes key in its leaf under a shared
// Spear: [FAA +1, READ leaf], then the slot's verbs, then FAA -1.
func (c *client) store(key, val []byte, mode storeMode) error {
	l := &c.x.l
	c.itemAddr = 0
	fast := true
	for range maxRetries {
		loc, err := c.locate(key, 0, fast)
		if err != nil {
			return err
		}
		for hops := 0; hops < maxRetries; hops++ {
			img := c.buf[:l.leafBytes]
			held := loc.addr
			if err := c.acquireShared(held, img); err != nil {
				return err
			}
			next, err := c.arrive(&loc, img, key, hops)
			if next || errors.Is(err, errStale) {
				// arrive moved loc on: release the leaf held.
				if err := c.releaseShared(held); err != nil {
					return err
				}
				if next {
					continue
				}
				break
			}
			err = c.modifyLeaf(loc, img, key, val, mode)
			if errors.Is(err, errRestart) {
				// Another SMO rebuilt the leaf; going back to the
				// leaf would cost its hot Spear two more FAAs when the
				// key has moved on, so look the key up again.
				break
			}
			return err
		}
		fast = false
	}
	return fmt.Errorf("no stable leaf after %d restarts", maxRetries)
}

// modifyLeaf applies the operation to the leaf at loc, whose image img
// was read under this client's share of its Spear, and releases it.
func (c *client) modifyLeaf(loc location, img, key, val []byte, mode storeMode) error {
	l := &c.x.l
	i := c.findKey(img, key)
	if mode == modeDelete {
		if i < 0 || !isItem(l.slotPtr(img, i)) {
			return joinRelease(indexes.ErrNotFound, c.releaseShared(loc.addr))
		}
		return c.swapSlot(loc.addr, i, l.slotPtr(img, i), slotTombstone, false)
	}
	if mode == modeUpdate && (i < 0 || !isItem(l.slotPtr(img, i))) {
		return joinRelease(indexes.ErrNotFound, c.releaseShared(loc.addr))
	}
	p, err := c.writeItem(key, val)
	if err != nil {
		return joinRelease(err, c.releaseShared(loc.addr))
	}
	if i >= 0 {
		return c.swapSlot(loc.addr, i, l.slotPtr(img, i), p, mode == modeInsert)
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
	for range maxRetries {
		got, err := c.cas(a, old, p)
		if err != nil {
			return joinRelease(fmt.Errorf("swapping slot %v: %w", a, err), c.releaseShared(addr))
		}
		if got == old {
			return c.releaseShared(addr)
		}
		if got == slotTombstone && !revive {
			return joinRelease(indexes.ErrNotFound, c.releaseShared(addr))
		}
		old = got
	}
	return joinRelease(fmt.Errorf("slot %v still changing after %d CASes", a, maxRetries), c.releaseShared(addr))
}

// writeItem allocates and WRITEs this operation's data item (once per
// operation, however often it retries) and returns its address.
func (c *client) writeItem(key, val []byte) (uint64, error) {
	if c.itemAddr != 0 {
		return c.itemAddr, nil
	}
	l := &c.x.l
	c.flush()
	a, err := c.x.allocs[c.x.cn(c.ep.Node())].Alloc(c.ep, uint64(l.itemBytes), itemAlign)
	if err != nil {
		return 0, fmt.Errorf("allocating an item: %w", err)
	}
	c.x.itemBytes.Add(uint64(l.itemBytes))
	l.fillItem(c.item, key, val)
	if err := c.write(a, c.item); err != nil {
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
func (c *client) insertNew(loc location, img, key []byte, p uint64) error {
	l := &c.x.l
	for range maxRetries {
		var free, pending []int
		for i := range l.span {
			switch ptr := l.slotPtr(img, i); {
			case ptr == slotFree:
				free = append(free, i)
			case ptr&pendingBit != 0:
				pending = append(pending, i)
			}
		}
		c.charge(cost.LinearScan(l.span))
		mine, err := c.pendingFor(img, pending, key)
		if err != nil {
			return joinRelease(err, c.releaseShared(loc.addr))
		}
		switch {
		case mine:
			// Wait for the other insert of key to land.
			c.backoff()
		case len(free) <= 1:
			return c.splitLeaf(loc, key, p)
		default:
			claimed, err := c.claim(loc.addr, free, key, p)
			if err != nil || claimed {
				return err
			}
		}
		if err := c.read(img, loc.addr); err != nil {
			return joinRelease(fmt.Errorf("reading leaf %v: %w", loc.addr, err), c.releaseShared(loc.addr))
		}
		if i := c.findKey(img, key); i >= 0 {
			return c.swapSlot(loc.addr, i, l.slotPtr(img, i), p, true)
		}
	}
	return joinRelease(fmt.Errorf("leaf %v: no slot after %d tries", loc.addr, maxRetries), c.releaseShared(loc.addr))
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
	c.charge(cost.HashKey())
	h := fnv.New64a()
	h.Write(key)
	home := int(h.Sum64() % uint64(l.span))
	i := free[sort.SearchInts(free, home)%len(free)]
	a := addr.Add(l.slotOffset(i))
	got, err := c.cas(a, slotFree, p|pendingBit)
	if err != nil {
		return false, joinRelease(fmt.Errorf("claiming slot %v: %w", a, err), c.releaseShared(addr))
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

// joinRelease reports an error that ended an operation together with any
// error of the release that followed it.
func joinRelease(err, releaseErr error) error {
	if releaseErr != nil {
		return fmt.Errorf("%w (and releasing: %v)", err, releaseErr)
	}
	return err
}
