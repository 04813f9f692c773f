package rftree

import (
	"bytes"
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// Range calls fn on up to n entries from start on in key order (section
// 3.3.3, "Range Query"): the SLC gives the data node covering start, and
// the scan goes on along sibling pointers, one READ per data node, each
// checked by its checksum (RF-tree does not batch them, section 4.2). It
// takes no locks, so its isolation is weak: each data node is read
// consistently, but the nodes are read at different times. What it keeps:
// keys strictly increase (an entry at or below the last one passed is
// skipped, as happens when a merge moves entries into a node already
// read), and none below start.
func (c *client) Range(start []byte, n int, fn func(key, val []byte) bool) error {
	if n <= 0 {
		return nil
	}
	l := &c.x.l
	img := c.buf
	if _, err := c.locate(start, img); err != nil {
		return err
	}
	var last []byte // the last key passed to fn
	for range maxRetries {
		from := start
		if last != nil {
			from = last
		}
		i, _ := l.leafFind(img, from)
		c.charge(cost.NodeSearch(count(img)))
		for ; i < min(count(img), l.leafCard); i++ {
			k := l.leafKey(img, i)
			if compare(k, start) < 0 || last != nil && compare(k, last) <= 0 {
				continue
			}
			last = bytes.Clone(k)
			n--
			if !fn(last, bytes.Clone(l.leafVal(img, i))) || n == 0 {
				return nil
			}
		}
		if unbounded(img) {
			return nil
		}
		high := bytes.Clone(l.high(img))
		if err := c.next(img, sibling(img), high); err != nil {
			return err
		}
	}
	return fmt.Errorf("scan did not finish after %d data nodes", maxRetries)
}

// next reads the data node after one whose high fence was high: its
// sibling a, or, if a has since been merged away, the node it merged
// into, or, if a is no longer a data node in that place (freed and used
// again), the node the SLC gives for high.
func (c *client) next(img []byte, a transport.GAddr, high []byte) error {
	l := &c.x.l
	for range maxRetries {
		if a != 0 {
			if err := c.readNode(img, a); err != nil {
				return err
			}
			switch {
			case level(img) == 0 && deleted(img):
				a = sibling(img)
				continue
			case level(img) == 0 && compare(l.low(img), high) <= 0:
				return nil
			}
		}
		_, err := c.locate(high, img)
		return err
	}
	return fmt.Errorf("no data node after %x in %d reads", high, maxRetries)
}
