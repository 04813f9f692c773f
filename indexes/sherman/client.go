package sherman

import (
	"fmt"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/internal/inner"
	"github.com/dmbench/dmbench/transport"
)

// client runs operations for one coroutine. Its buffers are reused across
// operations and never shared.
type client struct {
	// Client is the internal-node layer's part: the endpoint, the work
	// charged, node buffers and the path of the current operation.
	inner.Client[held]
	x   *Index
	tag uint64 // this thread's lock tag

	w1, w2, word [8]byte // lock words
	ops          []transport.Op
	scanBuf      []byte // scan batches
}

// stepCRC labels the time spent computing node checksums in the crc
// variant: RF-tree's Figure 8 breaks it out of Sherman's time.
const stepCRC transport.Step = 1

// post issues ops as one doorbell batch (a single op as a plain verb).
func (c *client) post(ops []transport.Op) error {
	c.Flush()
	switch len(ops) {
	case 0:
		return nil
	case 1:
		if ops[0].Kind == transport.VerbWrite {
			return c.EP.Write(ops[0].Addr, ops[0].Buf)
		}
	}
	return c.EP.Post(ops...)
}

// writes builds a batch of WRITEs in the client's scratch slice.
func (c *client) writes(ws ...transport.Op) []transport.Op {
	c.ops = append(c.ops[:0], ws...)
	return c.ops
}

func (c *client) classOf(r inner.KeyRange) class { return c.x.parts.classOf(r, c.EP.Node()) }

// Begin starts an operation: a partitioned index (P-Sherman) refuses a
// key of another compute node's partition, except to a scan, which may
// start anywhere.
func (c *client) Begin(op string, key []byte) error {
	if x := c.x; x.parts != nil && op != indexes.OpScan {
		if o := x.parts.owner(key); o != c.EP.Node() {
			return fmt.Errorf("sherman: %s: partitioned: key %x lies in compute node %d's partition, not in this node's (%d)", op, key, o, c.EP.Node())
		}
	}
	return c.Client.Begin(op, key)
}
