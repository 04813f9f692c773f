package rftree

import (
	"bytes"
	"encoding/binary"
	"errors"

	"github.com/dmbench/dmbench/indexes/internal/inner"
	"github.com/dmbench/dmbench/transport"
)

// maxRetries bounds every retry loop (re-reads of a torn node, CASes on a
// held lock, restarts after wrong routes). Each retry issues a verb, so
// time moves on; the bound only turns a livelock into an error.
const maxRetries = 1 << 20

// errWrongNode restarts an operation with a fresh SLC: the route led to a
// node that cannot hold the key (a data node whose low fence is above it,
// a node of the wrong level).
var errWrongNode = errors.New("the search layer cache sent the key to a wrong node")

var compare = bytes.Compare

func putWord(b []byte, w uint64) { binary.LittleEndian.PutUint64(b, w) }
func getWord(b []byte) uint64    { return binary.LittleEndian.Uint64(b) }

// client runs operations for one coroutine. Its buffers are reused across
// operations and never shared.
type client struct {
	x   *Index
	ep  transport.Endpoint
	cn  *computeNode
	tag uint64 // this thread's lock holder tag

	buf, aux, sib, par []byte // node images
	word               [8]byte
	path               [inner.MaxLevels]transport.GAddr // internal nodes passed, by level

	// stale is the SLC an operation found behind: it is refreshed when
	// the operation is done (nil: none).
	stale *snapshot

	cpu int64 // local work charged but not yet handed to Compute
	crc int64 // the part of it that computes checksums (stepCRC)
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

func (c *client) cas(a transport.GAddr, expect, swap uint64) (uint64, error) {
	c.flush()
	return c.ep.CAS(a, expect, swap)
}

// post issues ops as one doorbell batch.
func (c *client) post(ops []transport.Op) error {
	c.flush()
	if len(ops) == 0 {
		return nil
	}
	return c.ep.Post(ops...)
}

// Begin starts an operation; RF-tree keeps no per-operation state.
func (c *client) Begin(string, []byte) error { return nil }

// End refreshes a stale cached path the operation found, then charges its
// remaining local work.
func (c *client) End(err error) error {
	if s := c.stale; s != nil {
		c.stale = nil
		if rerr := c.refresh(s, false); err == nil {
			err = rerr
		}
	}
	c.flush()
	return err
}
