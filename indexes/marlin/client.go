package marlin

import (
	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

// maxRetries bounds every retry loop. Each retry issues a verb or backs
// off, so time moves on; the bound only turns a livelock into an error.
const maxRetries = 1 << 20

// maxLevels bounds the height of a tree.
const maxLevels = 32

// pollNs is the back-off between READs of a lock word that is held.
const pollNs = 500

// client runs operations for one coroutine. Its buffers are reused
// across operations and never shared.
type client struct {
	x   *Index
	ep  transport.Endpoint
	tag uint64 // written into internal node locks

	buf, aux, sib []byte // node images
	item          []byte // a data item being written
	word          [8]byte
	ops           []transport.Op
	scanBuf       []byte

	// itemAddr is the item this write operation has written (0: none
	// yet), kept across its retries.
	itemAddr uint64

	cpu  int64 // local work charged but not yet handed to Compute
	path [maxLevels]step
}

// step is one internal node of the current operation's path.
type step struct {
	addr transport.GAddr
	rng  keyRange
}

// charge adds local work; flush hands it to the fabric before the next
// verb, so a run of small charges costs one Compute.
func (c *client) charge(ns int64) { c.cpu += ns }

func (c *client) flush() {
	if c.cpu > 0 {
		c.ep.Compute(c.cpu)
		c.cpu = 0
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

func (c *client) faa(a transport.GAddr, add uint64) (uint64, error) {
	c.flush()
	return c.ep.FAA(a, add)
}

// post issues ops as one doorbell batch (a single op as a plain verb).
func (c *client) post(ops []transport.Op) error {
	c.flush()
	if len(ops) == 0 {
		return nil
	}
	return c.ep.Post(ops...)
}

// backoff waits before polling a held lock again.
func (c *client) backoff() {
	c.flush()
	c.ep.Backoff(pollNs)
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

// Get looks key up: the leaf's READ, then the item's, with a warm cache.
func (c *client) Get(key []byte) ([]byte, bool, error) { return c.search(key) }

// Put inserts, updates or deletes key.
func (c *client) Put(key, val []byte, kind indexes.WriteKind) error { return c.store(key, val, kind) }

// Range calls fn on up to n entries from start on, in key order.
func (c *client) Range(start []byte, n int, fn func(key, val []byte) bool) error {
	return c.scan(start, n, fn)
}
