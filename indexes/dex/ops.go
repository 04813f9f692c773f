package dex

import (
	"bytes"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes"
)

// leafOp is the work an operation does on its leaf image: it returns
// whether it changed the image, and its error (ErrNotFound).
type leafOp func(n node) (changed bool, err error)

// Search looks key up (section 7: lookup).
func (c *client) Search(key []byte) ([]byte, bool, error) {
	var val []byte
	var found bool
	err := c.own(key, func() error {
		v, f, err := c.onLeaf(key, nil, opSearch, func(n node) (bool, error) {
			i, ok := c.x.l.leafFind(n, key)
			if ok {
				val = bytes.Clone(c.x.l.leafVal(n, i))
			}
			found = ok
			return false, nil
		})
		if v != nil || f {
			val, found = v, f
		}
		return err
	}, func(o int) error {
		var err error
		val, found, err = c.forward(o, opSearch, key, nil)
		return err
	})
	return val, found, err
}

// Update replaces key's value.
func (c *client) Update(key, val []byte) error {
	return c.write(key, val, opUpdate, func() error { return c.updateLocal(key, val) })
}

// Insert adds key or replaces its value; full nodes on the way are split
// eagerly (section 7).
func (c *client) Insert(key, val []byte) error {
	return c.write(key, val, opInsert, func() error { return c.insertLocal(key, val) })
}

// Delete removes key; a leaf left under a quarter full is merged with a
// sibling, and so is an inner node such a merge leaves under a quarter
// full (mergeLeaf).
func (c *client) Delete(key []byte) error {
	return c.write(key, nil, opDelete, func() error { return c.deleteLocal(key) })
}

func (c *client) updateLocal(key, val []byte) error {
	_, _, err := c.onLeaf(key, val, opUpdate, func(n node) (bool, error) {
		i, ok := c.x.l.leafFind(n, key)
		if !ok {
			return false, indexes.ErrNotFound
		}
		copy(c.x.l.leafVal(n, i), val)
		return true, nil
	})
	return err
}

func (c *client) insertLocal(key, val []byte) error {
	_, _, err := c.onLeaf(key, val, opInsert, func(n node) (bool, error) {
		l := &c.x.l
		i, ok := l.leafFind(n, key)
		if ok {
			copy(l.leafVal(n, i), val)
			return true, nil
		}
		if l.full(n) {
			return false, errRestart
		}
		l.leafInsertAt(n, i, key, val)
		return true, nil
	})
	return err
}

func (c *client) deleteLocal(key []byte) error {
	_, _, err := c.onLeaf(key, nil, opDelete, func(n node) (bool, error) {
		i, ok := c.x.l.leafFind(n, key)
		if !ok {
			return false, indexes.ErrNotFound
		}
		c.x.l.leafRemoveAt(n, i)
		return true, nil
	})
	return err
}

// write runs a write locally or at the key's owner.
func (c *client) write(key, val []byte, op opKind, local func() error) error {
	return c.own(key, local, func(o int) error {
		_, found, err := c.forward(o, op, key, val)
		if err == nil && !found {
			return indexes.ErrNotFound
		}
		return err
	})
}

// onLeaf finds key's leaf and applies fn to it: in the cache under the
// frame's lock, to a fetched leaf that was not admitted (written back at
// once, section 5.4), or on the memory node when the traversal offloads.
// It returns the offloaded answer when there is one. Without the cache it
// works on the memory pool's copy (onLeafDirect).
func (c *client) onLeaf(key, val []byte, op opKind, fn leafOp) ([]byte, bool, error) {
	if !c.x.opt.cached {
		return nil, false, c.onLeafDirect(key, op, fn)
	}
	l := &c.x.l
	for i := 0; ; i++ {
		c.retry(i)
		ref, rep, err := c.find(key, val, op)
		if err != nil {
			return nil, false, err
		}
		if rep != nil {
			if !rep.found && (op == opUpdate || op == opDelete) {
				return nil, false, indexes.ErrNotFound
			}
			return rep.val, rep.found, nil
		}
		if ref.temp != nil {
			c.ep.Compute(cost.NodeSearch(ref.temp.count()))
			changed, err := fn(ref.temp)
			if err == errRestart {
				// A full leaf must split in the cache: admit it next time.
				c.cn.mt.release(ref.addr)
				c.forceAdmit = true
				continue
			}
			if changed {
				if werr := c.x.writeBody(c.ep, ref.addr, ref.temp); werr != nil {
					err = werr
				}
			}
			c.cn.mt.release(ref.addr)
			return nil, false, err
		}
		f := ref.f
		if op == opSearch || op == opScan {
			f.mu.RLock()
			_, err := fn(f.data)
			f.mu.RUnlock()
			c.ep.Compute(cost.NodeSearch(l.leafCap))
			if f.ver.Load() != ref.v {
				continue
			}
			return nil, false, err
		}
		if !f.lock(c.ep, ref.v) {
			continue
		}
		f.mu.Lock()
		changed, err := fn(f.data)
		f.mu.Unlock()
		c.ep.Compute(cost.NodeSearch(l.leafCap))
		if changed {
			f.dirty.Store(true)
		}
		low := op == opDelete && changed && f.data.count() < l.leafCap/4
		f.unlock()
		if err == errRestart {
			continue
		}
		if low && ref.parent != nil {
			if merr := c.mergeLeaf(ref.parent, key); merr != nil && merr != errRestart {
				return nil, false, merr
			}
		}
		return nil, false, err
	}
}
