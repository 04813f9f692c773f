package marlin

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes/internal/inner"
	"github.com/dmbench/dmbench/transport"
)

// scanLeaf is one leaf of a scan batch.
type scanLeaf struct {
	addr transport.GAddr
	img  []byte
}

// Range calls fn on up to n entries from start on in key order. Like
// Marlin's range_query it takes the leaf pointers from the cached level-1
// node covering the cursor and READs the leaves in one doorbell batch,
// then READs the data items of the entries it returns in another: one READ
// per item. A leaf that splits meanwhile or is missing from a stale cached
// parent is reached through sibling pointers, so no key is skipped.
func (c *client) Range(start []byte, n int, fn func(key, val []byte) bool) error {
	if n <= 0 {
		return nil
	}
	l := &c.x.l
	cursor := bytes.Clone(start)
	var found []leafEntry
	// Leaves to READ for n entries: at first guess the ln 2 ~ 69% fill of
	// a B-tree grown by random inserts, then what this scan has seen.
	perLeaf, seen, leaves := max(1, l.span*69/100), 0, 0
	done := false
	for range inner.MaxRetries {
		if done || len(found) >= n {
			return c.emitItems(found[:min(n, len(found))], fn)
		}
		want := (n-len(found)+perLeaf-1)/perLeaf + 1
		batch, parent, err := c.scanBatch(cursor, want)
		if err != nil {
			return err
		}
		var next transport.GAddr // sibling of the last leaf used
		for i := 0; i < len(batch) && len(found) < n; {
			img := batch[i].img
			switch low := l.Low(img); {
			case i == 0 || bytes.Equal(low, cursor):
				i++
			case bytes.Compare(low, cursor) < 0:
				i++ // reached already through a sibling pointer
				continue
			default:
				// A leaf the cached parent does not list yet.
				if img, err = c.chase(next); err != nil {
					return err
				}
			}
			for inner.Level(img) == 0 && !l.Covers(img, cursor) && bytes.Compare(cursor, l.Low(img)) >= 0 {
				// The leaf split after its parent was read.
				if img, err = c.chase(inner.Sibling(img)); err != nil {
					return err
				}
			}
			if inner.Level(img) != 0 || !l.Covers(img, cursor) {
				if parent != nil {
					c.DropCached(parent)
				}
				break // a stale path: look the cursor up again
			}
			s := len(found)
			found = c.collect(img, cursor, found)
			seen += len(found) - s
			leaves++
			if inner.Unbounded(img) {
				done = true
				break
			}
			cursor = bytes.Clone(l.High(img))
			next = inner.Sibling(img)
		}
		if leaves > 0 && seen > 0 {
			perLeaf = max(1, seen/leaves)
		}
	}
	return fmt.Errorf("scan did not finish after %d batches", inner.MaxRetries)
}

// scanBatch READs up to want leaves from the one covering cursor on, as
// listed by the level-1 node covering cursor (a tree of one leaf has just
// that leaf), in one doorbell batch; leaves caught inconsistent are read
// again alone.
func (c *client) scanBatch(cursor []byte, want int) ([]scanLeaf, *inner.CachedNode, error) {
	l := &c.x.l
	leaves, parent, rootLeaf, err := c.Leaves(cursor, want)
	if err != nil {
		return nil, nil, err
	}
	batch := make([]scanLeaf, len(leaves))
	for i, lf := range leaves {
		batch[i].addr = lf.Addr
	}
	if need := len(batch) * l.leafBytes; len(c.scanBuf) < need {
		c.scanBuf = make([]byte, inner.KParaFetch*l.leafBytes)
	}
	c.ops = c.ops[:0]
	for i := range batch {
		batch[i].img = c.scanBuf[i*l.leafBytes : (i+1)*l.leafBytes]
		c.ops = append(c.ops, transport.ReadOp(batch[i].img, batch[i].addr))
	}
	if err := c.post(c.ops); err != nil {
		return nil, nil, fmt.Errorf("reading %d leaves: %w", len(batch), err)
	}
	for i := range batch {
		if !consistent(batch[i].img) {
			if err := c.readNode(batch[i].img, batch[i].addr); err != nil {
				return nil, nil, err
			}
		}
	}
	if rootLeaf && !l.CoversAll(batch[0].img) {
		c.ForgetRoot() // the root leaf has split: a new root is above it
	}
	return batch, parent, nil
}

// chase reads the leaf at a, reached through a sibling pointer.
func (c *client) chase(a transport.GAddr) ([]byte, error) {
	img := c.Sib[:c.x.l.leafBytes]
	return img, c.readNode(img, a)
}

// collect appends the live entries of leaf img at or after from to found,
// sorted (leaf slots are unsorted).
func (c *client) collect(img, from []byte, found []leafEntry) []leafEntry {
	l := &c.x.l
	s := len(found)
	for i := range l.span {
		if p := l.slotPtr(img, i); isItem(p) && bytes.Compare(l.slotKey(img, i), from) >= 0 {
			found = append(found, leafEntry{key: bytes.Clone(l.slotKey(img, i)), ptr: p})
		}
	}
	c.Charge(cost.LinearScan(l.span))
	add := found[s:]
	sort.Slice(add, func(a, b int) bool { return bytes.Compare(add[a].key, add[b].key) < 0 })
	c.Charge(int64(len(add)) * cost.NodeSearch(len(add)))
	return found
}

// emitItems READs the items of entries in one doorbell batch (Marlin's
// read_batches_sync) and hands them to fn in order.
func (c *client) emitItems(entries []leafEntry, fn func(key, val []byte) bool) error {
	if len(entries) == 0 {
		return nil
	}
	l := &c.x.l
	items := make([]byte, len(entries)*l.itemBytes)
	c.ops = c.ops[:0]
	for i, e := range entries {
		c.ops = append(c.ops, transport.ReadOp(items[i*l.itemBytes:(i+1)*l.itemBytes], transport.GAddr(e.ptr)))
	}
	if err := c.post(c.ops); err != nil {
		return fmt.Errorf("reading %d items: %w", len(entries), err)
	}
	for i, e := range entries {
		it := items[i*l.itemBytes : (i+1)*l.itemBytes]
		if !l.itemValid(it) || !bytes.Equal(l.itemKey(it), e.key) {
			return fmt.Errorf("item %v holds key %x, not %x", transport.GAddr(e.ptr), l.itemKey(it), e.key)
		}
		if !fn(e.key, bytes.Clone(l.itemVal(it))) {
			return nil
		}
	}
	return nil
}
