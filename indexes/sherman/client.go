package sherman

import (
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

// Begin starts an operation: a partitioned index (P-Sherman) refuses a
// key of another compute node's partition, except to a scan, which may
// start anywhere.
func (c *client) Begin(op string, key []byte) error {
	if x := c.x; x.parts != nil && op != indexes.OpScan {
		if o := x.parts.owner(key); o != c.ep.Node() {
			return fmt.Errorf("sherman: %s: partitioned: key %x lies in compute node %d's partition, not in this node's (%d)", op, key, o, c.ep.Node())
		}
	}
	c.resetPath()
	return nil
}

// End charges the operation's remaining local work.
func (c *client) End(err error) error {
	c.flush()
	return err
}

// Get looks key up: one READ of its leaf with a warm cache.
func (c *client) Get(key []byte) ([]byte, bool, error) { return c.search(key) }

// Put inserts, updates or deletes key.
func (c *client) Put(key, val []byte, kind indexes.WriteKind) error { return c.store(key, val, kind) }

// Range calls fn on up to n entries from start on, in key order.
func (c *client) Range(start []byte, n int, fn func(key, val []byte) bool) error {
	return c.scan(start, n, fn)
}
