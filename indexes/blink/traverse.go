package blink

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes/internal/inner"
	"github.com/dmbench/dmbench/transport"
)

// readRoot READs the root pointer: the root's address and level. With no
// compute-side cache, every traversal starts here.
func (c *client) readRoot() (transport.GAddr, int, error) {
	if err := c.read(c.word[:], c.x.rootPtr); err != nil {
		return 0, 0, fmt.Errorf("reading the root pointer: %w", err)
	}
	a, lvl := inner.DecodeRoot(binary.LittleEndian.Uint64(c.word[:]))
	if a.IsNil() || lvl >= inner.MaxLevels {
		return 0, 0, fmt.Errorf("root pointer %#x names no node", binary.LittleEndian.Uint64(c.word[:]))
	}
	return a, lvl, nil
}

// readNode is the optimistic read: one READ of node a into dst, again
// until the image is whole (front and rear versions equal, CRC32
// matching). A node locked by a writer reads as its last written version.
func (c *client) readNode(dst []byte, a transport.GAddr) error {
	for range maxRetries {
		if err := c.read(dst, a); err != nil {
			return fmt.Errorf("reading node %v: %w", a, err)
		}
		c.chargeCRC(cost.Checksum(len(dst)))
		if consistent(dst) {
			return nil
		}
		c.ep.Backoff(0) // let the writer run on real fabrics; free on sim
	}
	return fmt.Errorf("node %v: no consistent image after %d READs", a, maxRetries)
}

// descend walks from the root down to the node of level lvl whose range
// holds key and leaves its image in c.buf. It moves right past nodes a
// concurrent split has narrowed (B-link) and records in c.path the node it
// passed through at each level above lvl.
func (c *client) descend(key []byte, lvl int) (transport.GAddr, error) {
	for range maxRetries {
		a, top, err := c.readRoot()
		if err != nil {
			return 0, err
		}
		if top < lvl {
			return 0, fmt.Errorf("the tree has no level %d (its root is at level %d)", lvl, top)
		}
		a, err = c.walk(a, key, lvl)
		if err != nil || !a.IsNil() {
			return a, err
		}
		// A node under key: cannot happen while nodes never merge, but
		// a fresh walk from the root is always safe.
	}
	return 0, fmt.Errorf("no path to level %d after %d restarts", lvl, maxRetries)
}

// walk descends from node a; it returns the nil address when it has to
// start again from the root.
func (c *client) walk(a transport.GAddr, key []byte, lvl int) (transport.GAddr, error) {
	l := &c.x.l
	for range maxRetries {
		if err := c.readNode(c.buf, a); err != nil {
			return 0, err
		}
		if l.below(c.buf, key) {
			return 0, nil
		}
		if l.beyond(c.buf, key) {
			next := sibling(c.buf)
			if next.IsNil() {
				return 0, fmt.Errorf("node %v ends at %x with no right sibling", a, l.high(c.buf))
			}
			a = next
			continue
		}
		lv := level(c.buf)
		if lv == lvl {
			return a, nil
		}
		if lv < lvl {
			return 0, fmt.Errorf("level %d node %v on the way to level %d", lv, a, lvl)
		}
		c.path[lv] = a
		i := l.innerSearch(c.buf, key)
		c.charge(cost.NodeSearch(count(c.buf) + 1))
		a = l.innerChild(c.buf, i)
	}
	return 0, fmt.Errorf("no end to the walk after %d nodes", maxRetries)
}

// Get finds key's leaf and looks the key up in it: the root pointer, then
// one READ per level.
func (c *client) Get(key []byte) ([]byte, bool, error) {
	if _, err := c.descend(key, 0); err != nil {
		return nil, false, err
	}
	l := &c.x.l
	i, found := l.leafSearch(c.buf, key)
	c.charge(cost.NodeSearch(count(c.buf)))
	if !found {
		return nil, false, nil
	}
	return bytes.Clone(l.leafVal(c.buf, i)), true, nil
}
