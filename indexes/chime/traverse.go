package chime

import (
	"encoding/binary"
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

func putWord(b []byte, w uint64) { binary.LittleEndian.PutUint64(b, w) }

// readWord READs one 8-byte word.
func (c *client) readWord(a transport.GAddr) (uint64, error) {
	var b [8]byte
	if err := c.ep.Read(b[:], a); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// readInner READs the internal node at a until it is not torn.
func (c *client) readInner(a transport.GAddr) (*inner, error) {
	buf := make([]byte, c.x.ig.bytes)
	for {
		if err := c.ep.Read(buf, a); err != nil {
			return nil, fmt.Errorf("reading internal node %v: %w", a, err)
		}
		if n, ok := c.x.ig.decode(a, buf); ok {
			c.ep.Compute(cost.NodeSearch(len(n.keys)))
			return n, nil
		}
	}
}

// readInnerRight reads the node at a and follows right siblings until the
// node covers key (B-link: a split moved key's range right).
func (c *client) readInnerRight(a transport.GAddr, key []byte) (*inner, error) {
	for {
		n, err := c.readInner(a)
		if err != nil {
			return nil, err
		}
		if !n.beyond(key) {
			return n, nil
		}
		a = n.sibling
	}
}

// root returns the root node: the cached copy, or on refresh (and on
// first use) READs of the root pointer and the node it names.
func (c *client) root(refresh bool) (*inner, error) {
	if n := c.cache.rootNode.Load(); n != nil && !refresh {
		return n, nil
	}
	w, err := c.readWord(c.x.root)
	if err != nil {
		return nil, fmt.Errorf("reading the root pointer: %w", err)
	}
	n, err := c.readInner(transport.GAddr(w))
	if err != nil {
		return nil, err
	}
	c.cache.rootNode.Store(n)
	c.cache.put(n, n.low)
	return n, nil
}

// descend returns the internal node at level stop covering key, using
// cached nodes where it can and READing (and caching) the others.
func (c *client) descend(key []byte, stop int) (*inner, error) {
	top, err := c.root(false)
	if err != nil {
		return nil, err
	}
	for top.level < stop {
		// The level above stop is being created by a root split that has
		// not yet swung the root pointer: wait for it.
		if top, err = c.root(true); err != nil {
			return nil, err
		}
	}
	level := top.level
	addr := top.addr
	for {
		c.ep.Compute(cost.CacheLookup())
		n := c.cache.find(level, key)
		if n == nil {
			if n, err = c.readInnerRight(addr, key); err != nil {
				return nil, err
			}
			c.cache.put(n, key)
		} else {
			c.ep.Compute(cost.NodeSearch(len(n.keys)))
		}
		if n.level == stop {
			return n, nil
		}
		addr, level = n.child(key), n.level-1
	}
}

// leafFor returns the leaf covering key by the cached tree, and the
// level-1 node that named it (to invalidate if the leaf proves stale).
func (c *client) leafFor(key []byte) (transport.GAddr, *inner, error) {
	c.ep.Compute(cost.CacheLookup())
	if n := c.cache.find(1, key); n != nil {
		c.ep.Compute(cost.NodeSearch(len(n.keys)))
		return n.child(key), n, nil
	}
	n, err := c.descend(key, 1)
	if err != nil {
		return 0, nil, err
	}
	return n.child(key), n, nil
}
