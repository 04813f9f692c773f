package sherman

import (
	"errors"
	"fmt"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

// maxRetries bounds every retry loop (re-reads of a torn node, CASes on a
// held lock, restarts after stale caches). Each retry issues a verb, so
// time moves on; the bound only turns a livelock into an error.
const maxRetries = 1 << 20

// maxLevels bounds the height of a tree.
const maxLevels = 32

// client runs operations for one coroutine. Its buffers are reused across
// operations and never shared.
type client struct {
	x   *Index
	ep  transport.Endpoint
	tag uint64 // this thread's lock tag

	buf, aux, sib []byte  // node images
	w1, w2, word  [8]byte // lock words
	ops           []transport.Op
	scanBuf       []byte // scan batches

	cpu  int64 // local work charged but not yet handed to Compute
	crc  int64 // the part of it that computes node checksums (stepCRC)
	path [maxLevels]step
	// probe is the scratch node a cache lookup orders by.
	probe cachedNode
}

// stepCRC labels the time spent computing node checksums in the crc
// variant: RF-tree's Figure 8 breaks it out of Sherman's time.
const stepCRC transport.Step = 1

// step is one internal node of the current operation's path: where it is
// and the key range the traversal believed it had.
type step struct {
	addr transport.GAddr
	rng  keyRange
}

// charge adds local work; flush hands it to the fabric before the next
// verb, so a run of small charges costs one Compute.
func (c *client) charge(ns int64) { c.cpu += ns }

// chargeCRC adds the work of checksumming nodes.
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

// post issues ops as one doorbell batch (a single op as a plain verb).
func (c *client) post(ops []transport.Op) error {
	c.flush()
	switch len(ops) {
	case 0:
		return nil
	case 1:
		if ops[0].Kind == transport.VerbWrite {
			return c.ep.Write(ops[0].Addr, ops[0].Buf)
		}
	}
	return c.ep.Post(ops...)
}

// writes builds a batch of WRITEs in the client's scratch slice.
func (c *client) writes(ws ...transport.Op) []transport.Op {
	c.ops = append(c.ops[:0], ws...)
	return c.ops
}

func (c *client) classOf(r keyRange) class { return c.x.parts.classOf(r, c.ep.Node()) }

func (c *client) resetPath() { clear(c.path[:]) }

// begin checks an operation's key and starts it.
func (c *client) begin(op string, key []byte) error {
	x := c.x
	if len(key) != x.l.keySize {
		return fmt.Errorf("sherman: %s: key of %d bytes, want %d", op, len(key), x.l.keySize)
	}
	if x.parts != nil {
		if o := x.parts.owner(key); o != c.ep.Node() {
			return fmt.Errorf("sherman: %s: partitioned: key %x lies in compute node %d's partition, not in this node's (%d)", op, key, o, c.ep.Node())
		}
	}
	c.resetPath()
	return nil
}

// end charges the operation's remaining local work and wraps its error.
func (c *client) end(op string, key []byte, err error) error {
	c.flush()
	if err != nil && !errors.Is(err, indexes.ErrNotFound) {
		return fmt.Errorf("sherman: %s %x: %w", op, key, err)
	}
	return err
}

func (c *client) checkValue(op string, val []byte) error {
	if len(val) != c.x.l.valSize {
		return fmt.Errorf("sherman: %s: value of %d bytes, want %d", op, len(val), c.x.l.valSize)
	}
	return nil
}

// Search looks key up: one READ of its leaf with a warm cache.
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
	if len(start) != c.x.l.keySize {
		return fmt.Errorf("sherman: scan: key of %d bytes, want %d", len(start), c.x.l.keySize)
	}
	c.resetPath()
	return c.end("scan", start, c.scan(start, n, fn))
}
