package fpbtree

import (
	"github.com/dmbench/dmbench/transport"
)

// Read delegation and write combining (DMTree section 4.1, after SMART
// and Sherman): concurrent operations of one compute node on the same key
// form batches. While one operation on a key is in flight, later arrivals
// join the next batch, up to BatchLimit of them; when the flight ends the
// batch runs once for all its members: one search serves every member,
// one write stores the value of the last member to join (all members
// overlap that write, so ordering them by arrival is linearizable).
// Arrivals beyond the limit run on their own, bounding the wait.

// flight is the state of one key: the batch waiting for the one in flight.
type flight struct{ next *batch }

// batch is a group of operations run once. Its mutex is handed from the
// previous flight to the batch's first member to acquire it, who runs the
// operation (done false) and hands it on to members who read the result.
type batch struct {
	mu      transport.Mutex
	members int
	done    bool
	val     []byte
	found   bool
	err     error
}

// join returns the batch the caller must wait for, or nil when the
// caller runs the operation itself (no flight yet, or the next batch is
// full). run reports whether a flight was started for the caller.
func (c *Client) join(m map[string]*flight, k string, val []byte) (b *batch, run bool) {
	ns := c.ns
	ns.mu.Lock()
	defer ns.mu.Unlock()
	f := m[k]
	switch {
	case f == nil:
		m[k] = &flight{}
		return nil, true
	case f.next == nil:
		f.next = &batch{members: 1, val: val}
		f.next.mu.TryLock() // released when the flight in progress ends
		return f.next, false
	case f.next.members < c.t.opts.BatchLimit:
		f.next.members++
		f.next.val = val
		return f.next, false
	}
	return nil, false
}

// land ends the flight on k: the next batch, if any, becomes the flight.
func (c *Client) land(m map[string]*flight, k string) {
	ns := c.ns
	ns.mu.Lock()
	f := m[k]
	b := f.next
	if b == nil {
		delete(m, k)
		ns.mu.Unlock()
		return
	}
	f.next = nil
	ns.mu.Unlock()
	b.mu.Unlock()
}

// delegatedSearch is Search with read delegation.
func (c *Client) delegatedSearch(key []byte) ([]byte, bool, error) {
	k := string(key)
	b, run := c.join(c.ns.reads, k, nil)
	if b == nil {
		val, found, err := c.search(key)
		if run {
			c.land(c.ns.reads, k)
		}
		return val, found, err
	}
	b.mu.Lock(c.ep)
	if !b.done {
		b.val, b.found, b.err = c.search(key)
		b.done = true
		c.land(c.ns.reads, k)
	}
	val, found, err := b.val, b.found, b.err
	b.mu.Unlock()
	if val != nil {
		val = append([]byte(nil), val...)
	}
	return val, found, err
}

// combinedWrite is Insert or Update with write combining.
func (c *Client) combinedWrite(kind writeKind, key, val []byte) error {
	k := string([]byte{byte(kind)}) + string(key)
	b, run := c.join(c.ns.write, k, append([]byte(nil), val...))
	if b == nil {
		err := c.write(kind, key, val)
		if run {
			c.land(c.ns.write, k)
		}
		return err
	}
	b.mu.Lock(c.ep)
	if !b.done {
		b.err = c.write(kind, key, b.val)
		b.done = true
		c.land(c.ns.write, k)
	}
	err := b.err
	b.mu.Unlock()
	return err
}
