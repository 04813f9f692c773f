package smart

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/dmbench/dmbench/indexes"
)

func (c *client) check(op string, key, val []byte) error {
	if len(key) != c.ll.ks {
		return fmt.Errorf("smart: %s: key of %d bytes, want %d", op, len(key), c.ll.ks)
	}
	if val != nil && len(val) != c.ll.vs {
		return fmt.Errorf("smart: %s: value of %d bytes, want %d", op, len(val), c.ll.vs)
	}
	return nil
}

func wrap(op string, key []byte, err error) error {
	if err != nil && !errors.Is(err, indexes.ErrNotFound) {
		return fmt.Errorf("smart: %s %x: %w", op, key, err)
	}
	return err
}

// Search looks key up. With read delegation, a client searching a key
// that another client of its compute node is searching takes that
// client's answer.
func (c *client) Search(key []byte) ([]byte, bool, error) {
	if err := c.check("search", key, nil); err != nil {
		return nil, false, err
	}
	if !c.x.combine {
		v, ok, _, err := c.search(key)
		return v, ok, wrap("search", key, err)
	}
	t := c.cn.table
	for {
		g, r := t.joinRead(c.ep, key, &c.group)
		if g == nil {
			v, ok, _, err := c.search(key)
			return v, ok, wrap("search", key, err)
		}
		if r != nil {
			r.gate.Wait(c.ep)
			if r.served {
				return clone(r.val), r.found, r.err
			}
			continue
		}
		// The group numbers the leader's READs from 1, as c.reads does
		// from base+1: a waiter takes the answer only if it joined before
		// the READ the answer rests on, which need not be the last (a
		// READ confirming a cached slot, or the rest of a grown node,
		// may follow it).
		base := c.reads
		c.leading = g
		v, ok, at, err := c.search(key)
		c.leading = nil
		err = wrap("search", key, err)
		t.finishRead(c.ep, key, g, at-base, v, ok, err)
		return clone(v), ok, err
	}
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte(nil), b...)
}

// search looks key up on its own and returns the number of the READ its
// answer rests on (outcome.at); after an error, the last READ's.
func (c *client) search(key []byte) ([]byte, bool, int64, error) {
	h, err := c.start(key)
	if err != nil {
		return nil, false, c.reads, err
	}
	out, err := c.descend(key, h, true)
	switch {
	case err != nil:
		return nil, false, c.reads, err
	case out.end != endFound:
		return nil, false, out.at, nil
	}
	return clone(out.lf.val), true, out.at, nil
}

// Insert adds key or replaces its value.
func (c *client) Insert(key, val []byte) error {
	if err := c.check("insert", key, val); err != nil {
		return err
	}
	return wrap("insert", key, c.write(key, val, false))
}

// Update replaces the value of a present key.
func (c *client) Update(key, val []byte) error {
	if err := c.check("update", key, val); err != nil {
		return err
	}
	return wrap("update", key, c.write(key, val, true))
}

// write runs an insert or update, combined with the other writers of key
// on this compute node (write combining): the first is the leader and
// writes the last value handed to it.
func (c *client) write(key, val []byte, mustExist bool) error {
	if err := c.owns(key); err != nil {
		return err
	}
	if !c.x.combine {
		same := func(cur []byte) bool { return bytes.Equal(cur, val) }
		return c.upsert(key, func() []byte { return val }, same, mustExist)
	}
	t := c.cn.table
	for {
		g, w := t.joinWrite(c.ep, key, val)
		if w != nil {
			w.gate.Wait(c.ep)
			if w.done {
				return w.err
			}
			continue
		}
		var taken []byte
		var riders []*writer
		err := c.upsert(key,
			func() []byte { return t.take(c.ep, key, g, val, &taken, &riders) },
			func(cur []byte) bool { return t.takeIfSame(c.ep, key, g, val, cur, &taken, &riders) },
			mustExist)
		t.finishWrite(c.ep, key, g, riders, err)
		return err
	}
}

// Delete removes key.
func (c *client) Delete(key []byte) error {
	if err := c.check("delete", key, nil); err != nil {
		return err
	}
	if err := c.owns(key); err != nil {
		return err
	}
	return wrap("delete", key, c.remove(key))
}

// owns checks that a P-SMART client writes only its own partition.
func (c *client) owns(key []byte) error {
	if p := c.x.parts; p != nil {
		if o := p.owner(key); o != c.ep.Node() {
			return fmt.Errorf("smart: partitioned: key %x lies in compute node %d's partition, not in this node's (%d)", key, o, c.ep.Node())
		}
	}
	return nil
}
