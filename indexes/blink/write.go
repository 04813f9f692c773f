package blink

import (
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

// Put inserts, updates or deletes key in its leaf: the traversal, the
// lock with the leaf's READ, the change in the local image and one WRITE
// of the whole leaf that also unlocks it. Deletes remove the entry and
// never merge leaves, as in FG.
func (c *client) Put(key, val []byte, kind indexes.WriteKind) error {
	a, err := c.descend(key, 0)
	if err != nil {
		return err
	}
	if a, err = c.lock(a, rear(c.buf), key); err != nil {
		return err
	}
	l := &c.x.l
	img := c.lk
	n := count(img)
	i, found := l.leafSearch(img, key)
	c.charge(cost.NodeSearch(n))
	switch {
	case !found && kind != indexes.WriteInsert:
		if err := c.unlock(a, version(img)); err != nil {
			return err
		}
		return indexes.ErrNotFound
	case kind == indexes.WriteDelete:
		l.leafRemoveAt(img, i)
		c.charge(cost.Copy((n - i) * l.leafEntry))
	case found:
		copy(l.leafVal(img, i), val)
	case n < l.leafCard:
		l.leafInsertAt(img, i, key, val)
		c.charge(cost.Copy((n - i) * l.leafEntry))
	default:
		sep, right, err := c.splitLeaf(a, i, key, val)
		if err != nil {
			return err
		}
		return c.insertParent(1, sep, a, right)
	}
	return c.release(a, img)
}

// insertParent adds separator sep with child right (the new right half of
// node left, one level down) to the level lvl node that holds sep,
// splitting it in turn when full, up to a new root.
func (c *client) insertParent(lvl int, sep []byte, left, right transport.GAddr) error {
	l := &c.x.l
	for {
		a, err := c.parent(lvl, sep, left, right)
		if err != nil || a.IsNil() {
			return err
		}
		if a, err = c.lock(a, rear(c.buf), sep); err != nil {
			return err
		}
		img := c.lk
		c.charge(cost.NodeSearch(count(img) + 1))
		if count(img) < l.innerCard {
			if !l.innerInsert(img, sep, right) {
				return c.duplicateSeparator(a, sep)
			}
			c.charge(cost.Copy(l.innerEntry * count(img) / 2))
			return c.release(a, img)
		}
		up, newRight, err := c.splitInner(a, sep, right)
		if err != nil {
			return err
		}
		lvl, sep, left, right = lvl+1, up, a, newRight
	}
}

// parent finds the level lvl node to start the separator's insert at and
// leaves its image in c.buf: the node the traversal passed, or one found
// from the root. When the split node was the root, it publishes a new root
// over both halves instead and returns the nil address.
func (c *client) parent(lvl int, sep []byte, left, right transport.GAddr) (transport.GAddr, error) {
	if a := c.path[lvl]; !a.IsNil() {
		return a, c.readNode(c.buf, a)
	}
	for range maxRetries {
		root, top, err := c.readRoot()
		if err != nil {
			return 0, err
		}
		if top >= lvl {
			a, err := c.walk(root, sep, lvl)
			if err != nil || !a.IsNil() {
				return a, err
			}
			continue
		}
		// The tree is only lvl levels tall. Only the root itself grows a
		// new root; a split of another node of its level waits for the
		// root's splitter to publish one.
		if root != left {
			continue
		}
		done, err := c.newRoot(lvl, sep, left, right)
		if done || err != nil {
			return 0, err
		}
	}
	return 0, fmt.Errorf("no level %d node for separator %x after %d attempts", lvl, sep, maxRetries)
}
