package blink

import (
	"errors"
	"fmt"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

// stepCRC labels the time spent computing node checksums: RF-tree's
// Figure 8 shows it apart from the rest of the in-memory work.
const stepCRC transport.Step = 1

// client runs operations for one coroutine. Its buffers are reused across
// operations and never shared.
type client struct {
	x     *Index
	ep    transport.Endpoint
	alloc *transport.Allocator // this compute node's

	buf  []byte // node images: the traversal's,
	lk   []byte // the locked node's,
	sib  []byte // a split's new right half,
	root []byte // a new root
	next []byte // a scan's next key
	word [8]byte
	ops  [2]transport.Op

	cpu  int64 // local work charged but not yet handed to Compute
	crc  int64 // the part of it that computes checksums (stepCRC)
	path [maxLevels]transport.GAddr
}

// charge adds local work; flush hands it to the fabric before the next
// verb, so a run of small charges costs one Compute.
func (c *client) charge(ns int64)    { c.cpu += ns }
func (c *client) chargeCRC(ns int64) { c.crc += ns }

func (c *client) flush() {
	if c.cpu > 0 {
		c.ep.Compute(c.cpu)
		c.cpu = 0
	}
	if c.crc > 0 {
		prev := c.ep.Step()
		c.ep.SetStep(stepCRC)
		c.ep.Compute(c.crc)
		c.ep.SetStep(prev)
		c.crc = 0
	}
}

func (c *client) read(dst []byte, src transport.GAddr) error {
	c.flush()
	return c.ep.Read(dst, src)
}

func (c *client) write(dst transport.GAddr, src []byte) error {
	c.flush()
	return c.ep.Write(dst, src)
}

func (c *client) post(ops ...transport.Op) error {
	c.flush()
	return c.ep.Post(ops...)
}

// begin checks an operation's key and clears its path.
func (c *client) begin(op string, key []byte) error {
	if len(key) != c.x.l.keySize {
		return fmt.Errorf("blink: %s: key of %d bytes, want %d", op, len(key), c.x.l.keySize)
	}
	clear(c.path[:])
	return nil
}

// end charges the operation's remaining local work and wraps its error.
func (c *client) end(op string, key []byte, err error) error {
	c.flush()
	if err != nil && !errors.Is(err, indexes.ErrNotFound) {
		return fmt.Errorf("blink: %s %x: %w", op, key, err)
	}
	return err
}

func (c *client) checkValue(op string, val []byte) error {
	if len(val) != c.x.l.valSize {
		return fmt.Errorf("blink: %s: value of %d bytes, want %d", op, len(val), c.x.l.valSize)
	}
	return nil
}

// Search looks key up: the root pointer, then one READ per level.
func (c *client) Search(key []byte) ([]byte, bool, error) {
	if err := c.begin("search", key); err != nil {
		return nil, false, err
	}
	val, found, err := c.search(key)
	return val, found, c.end("search", key, err)
}

// Insert adds key, or replaces its value when present.
func (c *client) Insert(key, val []byte) error {
	if err := c.begin("insert", key); err != nil {
		return err
	}
	if err := c.checkValue("insert", val); err != nil {
		return err
	}
	return c.end("insert", key, c.store(key, val, modeInsert))
}

// Update replaces the value of key.
func (c *client) Update(key, val []byte) error {
	if err := c.begin("update", key); err != nil {
		return err
	}
	if err := c.checkValue("update", val); err != nil {
		return err
	}
	return c.end("update", key, c.store(key, val, modeUpdate))
}

// Delete removes key.
func (c *client) Delete(key []byte) error {
	if err := c.begin("delete", key); err != nil {
		return err
	}
	return c.end("delete", key, c.store(key, nil, modeDelete))
}

// Scan calls fn on up to n entries from start on, in key order.
func (c *client) Scan(start []byte, n int, fn func(key, val []byte) bool) error {
	if err := c.begin("scan", start); err != nil {
		return err
	}
	return c.end("scan", start, c.scan(start, n, fn))
}
