package sherman

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

// search reads the leaf covering key: one READ (three in optlock) with a
// warm cache, repeated while the image is torn.
func (c *client) search(key []byte) ([]byte, bool, error) {
	l := &c.x.l
	fast := true
	for range maxRetries {
		loc, err := c.locate(key, 0, fast)
		if err != nil {
			return nil, false, err
		}
		for hops := 0; hops < maxRetries; hops++ {
			cls := c.classOf(loc.rng)
			img := c.buf[:l.leafBytes]
			if err := c.readNode(img, loc.addr, cls); err != nil {
				return nil, false, err
			}
			next, err := c.arrive(&loc, img, key, hops)
			if errors.Is(err, errStale) {
				break
			}
			if next {
				continue
			}
			val, found, torn := c.findInLeaf(img, key, c.checkEntries(cls))
			if torn {
				continue
			}
			if found {
				return bytes.Clone(val), true, nil
			}
			return nil, false, nil
		}
		fast = false
	}
	return nil, false, fmt.Errorf("no stable leaf after %d restarts", maxRetries)
}

// arrive checks that the leaf image img read at loc covers key. When it
// does not, the leaf split after its parent was read: coming from a
// cached parent, the parent is dropped and the operation restarts from
// the root to refresh it (errStale), as Sherman does; coming from a
// fresh parent or a sibling, loc moves to the right sibling (next).
func (c *client) arrive(loc *location, img, key []byte, hops int) (next bool, err error) {
	l := &c.x.l
	if level(img) != 0 || bytes.Compare(key, l.low(img)) < 0 {
		c.dropParent(loc)
		c.forgetRoot()
		return false, errStale
	}
	if loc.isRoot && !l.coversAll(img) {
		c.forgetRoot()
	}
	if l.covers(img, key) {
		return false, nil
	}
	if loc.parent != nil && hops == 0 {
		c.dropParent(loc)
		return false, errStale
	}
	*loc = location{addr: sibling(img), rng: keyRange{lo: bytes.Clone(l.high(img))}}
	return true, nil
}

func (c *client) dropParent(loc *location) {
	if loc.parent != nil {
		c.x.cache(c.ep.Node()).invalidate(loc.parent)
	}
}

type storeMode = indexes.WriteKind

const (
	modeInsert = indexes.WriteInsert
	modeUpdate = indexes.WriteUpdate
	modeDelete = indexes.WriteDelete
)

// store inserts, updates or deletes key in its leaf: lock, READ the leaf,
// then WRITE the one entry and the unlock in one doorbell batch
// (Sherman's command combination and in-place entry write); a leaf that
// fills up is split instead.
func (c *client) store(key, val []byte, mode storeMode) error {
	l := &c.x.l
	fast := true
	for range maxRetries {
		loc, err := c.locate(key, 0, fast)
		if err != nil {
			return err
		}
		for hops := 0; hops < maxRetries; hops++ {
			h, err := c.lock(loc.addr, c.classOf(loc.rng))
			if err != nil {
				return err
			}
			img := c.buf[:l.leafBytes]
			if err := c.read(img, loc.addr); err != nil {
				return errors.Join(fmt.Errorf("reading leaf %v: %w", loc.addr, err), c.unlock(h))
			}
			next, err := c.arrive(&loc, img, key, hops)
			if next || errors.Is(err, errStale) {
				if err := c.unlock(h); err != nil {
					return err
				}
				if next {
					continue
				}
				break
			}
			return c.modifyLeaf(h, loc, img, key, val, mode)
		}
		fast = false
	}
	return fmt.Errorf("no stable leaf after %d restarts", maxRetries)
}

// modifyLeaf applies the operation to the locked leaf image img and
// writes it back.
func (c *client) modifyLeaf(h held, loc location, img, key, val []byte, mode storeMode) error {
	l := &c.x.l
	slot, empty, live := -1, -1, 0
	i := 0
	for ; i < l.leafCard && slot < 0; i++ {
		e := l.entry(img, i)
		switch {
		case entryValid(e) && bytes.Equal(l.entryKey(e), key):
			slot = i
		case entryValid(e):
			live++
		case empty < 0:
			empty = i
		}
	}
	c.charge(cost.LinearScan(i))
	if slot < 0 && mode != modeInsert {
		if err := c.unlock(h); err != nil {
			return err
		}
		return indexes.ErrNotFound
	}
	if slot < 0 {
		// A new key: the leaf holds live entries and this one; at rest a
		// leaf always has a free slot, because it splits when it fills.
		slot = empty
		if live+1 == l.leafCard {
			l.writeEntry(l.entry(img, slot), key, val)
			return c.splitLeaf(h, loc, img)
		}
	}
	e := l.entry(img, slot)
	l.writeEntry(e, key, val)
	ops := c.writes(transport.WriteOp(loc.addr.Add(l.entryOffset(slot)), e))
	if c.x.consistency == crc {
		c.chargeCRC(cost.Checksum(len(img) - 8))
		l.sealCRC(img)
		ops = append(ops, transport.WriteOp(loc.addr.Add(offCRC), img[offCRC:offCRC+8]))
	}
	return c.unlock(h, ops...)
}
