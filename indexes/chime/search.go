package chime

import (
	"bytes"
	"errors"
	"slices"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// search finds key: the level-1 node in the cache names its leaf; when
// the hotspot buffer knows a slot of the key's neighbourhood that held a
// key of its fingerprint, one speculative READ of that entry; else (or
// when that entry holds another key) one READ of the neighbourhood (two
// when it wraps past the leaf's end).
//
// A key found in a leaf is current: a split clears the entries it moves
// out in the same WRITE that lowers the high fence, and a displacement
// writes an entry's new slot before its old one. A key not found is absent
// when the replica of the high fence read with the neighbourhood says the
// leaf owns it.
func (c *client) search(key []byte) ([]byte, bool, error) {
	c.ep.Compute(cost.HashKey())
	leaf, parent, err := c.leafFor(key)
	if err != nil {
		return nil, false, err
	}
	h := c.g.home(key)
	fp := hotFingerprint(key)
	if c.hot != nil {
		if slot, ok := c.hotSlot(leaf, h, fp); ok {
			c.comb.CutRead() // the READ below decides a delegated answer
			val, hit, err := c.speculative(leaf, slot, key)
			if err != nil {
				return nil, false, err
			}
			if hit {
				c.hot.record(leaf, slot, fp)
				return val, true, nil
			}
			c.hot.forget(leaf, slot)
		}
	}
	for {
		c.comb.CutRead()
		w, err := c.readWindow(leaf, h, c.g.nbr)
		if errors.Is(err, errTorn) {
			continue
		}
		if err != nil {
			return nil, false, err
		}
		if !w.owns(key) {
			parent = c.stale(parent)
			leaf = w.meta.sibling
			continue
		}
		i := w.find(key)
		if i < 0 {
			return nil, false, nil
		}
		if c.hot != nil {
			c.hot.record(leaf, w.slot(i), fp)
		}
		return bytes.Clone(w.slots[i].val), true, nil
	}
}

// hotSlot asks the hotspot buffer for the slot of the neighbourhood at h
// that most often held a key of fingerprint fp, probing a bucket per
// slot.
func (c *client) hotSlot(leaf transport.GAddr, h int, fp uint16) (int, bool) {
	c.ep.Compute(int64(c.g.nbr) * cost.CacheLookup())
	return c.hot.lookup(leaf, h, c.g.nbr, c.g.span, fp)
}

// speculative READs the one entry at slot of leaf; hit reports that it
// holds key, untorn.
func (c *client) speculative(leaf transport.GAddr, slot int, key []byte) ([]byte, bool, error) {
	e, hit, err := c.readSlot(leaf, slot, key)
	if !hit || err != nil {
		return nil, false, err
	}
	return bytes.Clone(e.val), true, nil
}

// readSlot READs the one entry at slot of leaf; hit reports that it
// holds key, untorn. The entry aliases the client's buffers, which its
// next readSlot overwrites (as readWindow's).
func (c *client) readSlot(leaf transport.GAddr, slot int, key []byte) (entry, bool, error) {
	g := c.g
	lo, hi := g.slotRange(slot)
	c.slotRead = slices.Grow(c.slotRead[:0], hi-lo)[:hi-lo]
	c.slotItem = slices.Grow(c.slotItem[:0], g.entry)[:g.entry]
	im := image{base: lo, buf: c.slotRead}
	if err := c.ep.Read(im.buf, leaf.Add(uint64(lo))); err != nil {
		return entry{}, false, err
	}
	e, ok := g.slotItem(&im, slot, c.slotItem)
	if !ok || !e.occupied() || !bytes.Equal(e.key, key) {
		return entry{}, false, nil
	}
	return e, true, nil
}

// stale drops a level-1 node whose child proved to have split and returns
// nil, so that it is dropped only once per operation.
func (c *client) stale(parent *inner) *inner {
	if parent != nil {
		c.cache.invalidate(parent)
	}
	return nil
}
