package blink

import (
	"github.com/dmbench/dmbench/indexes/internal/inner"
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
	path [inner.MaxLevels]transport.GAddr
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

// Begin starts an operation: it clears the path.
func (c *client) Begin(string, []byte) error {
	clear(c.path[:])
	return nil
}

// End charges the operation's remaining local work.
func (c *client) End(err error) error {
	c.flush()
	return err
}
