package blink

import (
	"bytes"
	"fmt"

	"github.com/dmbench/dmbench/cost"
)

// Range calls fn on up to n entries from start on, in key order: it
// descends to the leaf of start, then reads leaves one by one along the
// sibling chain, one READ each (FG's scan; SPREAD's B-link tree has no
// READ batching either). Each leaf is read optimistically and checked; it
// yields its keys from the scan's next key on, and the next key becomes
// its high fence, so keys come out strictly increasing even when a leaf
// split between two READs. No lock is taken: the scan is not atomic, each
// leaf is a consistent image of its own moment.
func (c *client) Range(start []byte, n int, fn func(key, val []byte) bool) error {
	if n <= 0 {
		return nil
	}
	if _, err := c.descend(start, 0); err != nil {
		return err
	}
	l := &c.x.l
	c.next = append(c.next[:0], start...)
	for range maxRetries {
		i, _ := l.leafSearch(c.buf, c.next)
		c.charge(cost.NodeSearch(count(c.buf)))
		for ; i < count(c.buf); i++ {
			n--
			if !fn(bytes.Clone(l.leafKey(c.buf, i)), bytes.Clone(l.leafVal(c.buf, i))) || n == 0 {
				return nil
			}
		}
		if unbounded(c.buf) {
			return nil
		}
		c.next = append(c.next[:0], l.high(c.buf)...)
		next := sibling(c.buf)
		if next.IsNil() {
			return fmt.Errorf("leaf ends at %x with no right sibling", c.next)
		}
		if err := c.readNode(c.buf, next); err != nil {
			return err
		}
		// The sibling's low fence is next: nodes split to the right
		// and never merge.
	}
	return fmt.Errorf("scan from %x: no end after %d leaves", start, maxRetries)
}
