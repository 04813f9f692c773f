package sherman

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/internal/inner"
	"github.com/dmbench/dmbench/transport"
)

// Get looks key up: one READ of its leaf (three in optlock) with a warm
// cache, repeated while the image is torn.
func (c *client) Get(key []byte) (val []byte, found bool, err error) {
	l := &c.x.l
	err = c.AtLeaf(key, func(loc *inner.Location, hops int) (bool, error) {
		cls := c.classOf(loc.Rng)
		img := c.Buf[:l.leafBytes]
		if err := c.readNode(img, loc.Addr, cls); err != nil {
			return false, err
		}
		if next, err := c.Arrive(loc, img, key, hops); next || err != nil {
			return next, err
		}
		v, ok, torn := c.findInLeaf(img, key, c.checkEntries(cls))
		if ok {
			val, found = bytes.Clone(v), true
		}
		return torn, nil
	})
	return val, found, err
}

// Put inserts, updates or deletes key in its leaf: lock, READ the leaf,
// then WRITE the one entry and the unlock in one doorbell batch
// (Sherman's command combination and in-place entry write); a leaf that
// fills up is split instead.
func (c *client) Put(key, val []byte, kind indexes.WriteKind) error {
	l := &c.x.l
	return c.AtLeaf(key, func(loc *inner.Location, hops int) (bool, error) {
		h, err := c.lock(loc.Addr, c.classOf(loc.Rng))
		if err != nil {
			return false, err
		}
		img := c.Buf[:l.leafBytes]
		if err := c.Read(img, loc.Addr); err != nil {
			return false, errors.Join(fmt.Errorf("reading leaf %v: %w", loc.Addr, err), c.unlock(h))
		}
		if next, err := c.Arrive(loc, img, key, hops); next || err != nil {
			if uerr := c.unlock(h); uerr != nil {
				return false, uerr
			}
			return next, err
		}
		return false, c.modifyLeaf(h, *loc, img, key, val, kind)
	})
}

// modifyLeaf applies the operation to the locked leaf image img and
// writes it back.
func (c *client) modifyLeaf(h held, loc inner.Location, img, key, val []byte, kind indexes.WriteKind) error {
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
	c.Charge(cost.LinearScan(i))
	if slot < 0 && kind != indexes.WriteInsert {
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
	ops := c.writes(transport.WriteOp(loc.Addr.Add(l.entryOffset(slot)), e))
	if c.x.consistency == crc {
		c.ChargeStep(cost.Checksum(len(img) - 8))
		l.sealCRC(img)
		ops = append(ops, transport.WriteOp(loc.Addr.Add(offCRC), img[offCRC:offCRC+8]))
	}
	return c.unlock(h, ops...)
}
