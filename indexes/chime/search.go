package chime

import (
	"bytes"
	"errors"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// Search finds key: a speculative READ of one entry when the hotspot
// buffer knows its slot, else one READ of its neighbourhood (two when the
// neighbourhood wraps past the leaf's end).
//
// A key found in a leaf is current: a split clears the entries it moves
// out in the same WRITE that lowers the high fence, and a displacement
// writes an entry's new slot before its old one. A key not found is absent
// when the replica of the high fence read with the neighbourhood says the
// leaf owns it.
func (c *client) Search(key []byte) ([]byte, bool, error) {
	c.ep.Compute(cost.HashKey())
	if c.hot != nil {
		c.ep.Compute(cost.CacheLookup())
		if leaf, slot, ok := c.hot.lookup(key); ok {
			val, hit, err := c.speculative(leaf, slot, key)
			if err != nil || hit {
				return val, hit, err
			}
			c.hot.forget(key)
		}
	}
	leaf, parent, err := c.leafFor(key)
	if err != nil {
		return nil, false, err
	}
	h := c.g.home(key)
	for {
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
			c.hot.record(key, leaf, w.slot(i))
		}
		return bytes.Clone(w.slots[i].val), true, nil
	}
}

// speculative READs the one entry at slot of leaf; hit reports that it
// holds key, untorn.
func (c *client) speculative(leaf transport.GAddr, slot int, key []byte) ([]byte, bool, error) {
	g := c.g
	lo, hi := g.slotRange(slot)
	im := image{base: lo, buf: make([]byte, hi-lo)}
	if err := c.ep.Read(im.buf, leaf.Add(uint64(lo))); err != nil {
		return nil, false, err
	}
	e, ok := g.slotItem(&im, slot)
	if !ok || !e.occupied() || !bytes.Equal(e.key, key) {
		return nil, false, nil
	}
	return bytes.Clone(e.val), true, nil
}

// stale drops a level-1 node whose child proved to have split and returns
// nil, so that it is dropped only once per operation.
func (c *client) stale(parent *inner) *inner {
	if parent != nil {
		c.cache.invalidate(parent)
	}
	return nil
}
