package fpbtree

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// Scan visits up to n entries from start on, leaf by leaf through the
// cached internal entries (each leaf's range is what its version says).
func (c *Client) Scan(start []byte, n int, fn func(key, val []byte) bool) error {
	if n <= 0 {
		return nil
	}
	cursor := bytes.Clone(start)
	r, err := c.locate(cursor)
	if err != nil {
		return err
	}
	for {
		kvs, seen, err := c.scanLeaf(r)
		if err != nil {
			return err
		}
		if seen != r.version {
			if r, err = c.resolve(r, cursor, seen); err != nil {
				return err
			}
			continue
		}
		c.sortEntries(kvs)
		for _, e := range kvs {
			if bytes.Compare(e.key, cursor) < 0 {
				continue
			}
			n--
			if !fn(e.key, e.val) || n == 0 {
				return nil
			}
		}
		if r.inf {
			return nil
		}
		cursor = r.high
		if r, err = c.locate(cursor); err != nil {
			return err
		}
	}
}

// scanLeaf returns the live entries of r's leaf and the version it saw
// (r.version unless the leaf changed). Without filtering it READs the
// whole leaf; with it (section 4.1, Figure 10) it READs the primary table
// and then only the runs of non-empty slots, in one doorbell batch.
func (c *Client) scanLeaf(r ref) ([]kv, uint64, error) {
	defer c.ep.SetStep(c.label(StepKV))
	g := &c.t.G
	if !c.t.opts.FilterScans {
		for {
			img, h, err := c.readLeaf(r.leaf)
			if err != nil {
				return nil, 0, err
			}
			if h.version != r.version {
				return nil, h.version, nil
			}
			if kvs, ok := c.liveEntries(img, r.version, nil); ok {
				return kvs, r.version, nil
			}
		}
	}
	for {
		tbl, err := c.primaryTable(r)
		if err != nil {
			return nil, 0, err
		}
		if tbl.Version != r.version {
			return nil, tbl.Version, nil
		}
		img := make([]byte, g.LeafSize)
		var ops []transport.Op
		for s := 0; s < g.Span; {
			if !occupied(tbl.FPs[s]) {
				s++
				continue
			}
			e := s + 1
			for e < g.Span && (occupied(tbl.FPs[e]) || e+1 < g.Span && occupied(tbl.FPs[e+1])) {
				e++
			}
			lo, hi := g.entryOff(s), g.entryOff(e-1)+g.Entry
			ops = append(ops, transport.ReadOp(img[lo:hi], r.leaf.Add(uint64(lo))))
			s = e
		}
		if len(ops) == 0 {
			return nil, r.version, nil
		}
		if err := c.ep.Post(ops...); err != nil {
			return nil, 0, fmt.Errorf("read entries of leaf %v: %w", r.leaf, err)
		}
		kvs, ok := c.liveEntries(img, r.version, tbl.FPs)
		if ok {
			return kvs, r.version, nil
		}
	}
}

// sortEntries puts a leaf's live entries in key order.
func (c *Client) sortEntries(kvs []kv) {
	defer c.ep.SetStep(c.label(StepKV))
	c.ep.Compute(int64(len(kvs)) * cost.NodeSearch(len(kvs)))
	slices.SortFunc(kvs, func(a, b kv) int { return bytes.Compare(a.key, b.key) })
}

// liveEntries decodes the valid entries of a leaf image (only the slots
// with a fingerprint when fps is given); ok is false when an entry was
// written under another version (a split or merge landing) or is torn.
func (c *Client) liveEntries(img []byte, version uint64, fps []byte) ([]kv, bool) {
	g := &c.t.G
	var out []kv
	for i := range g.Span {
		if fps != nil && !occupied(fps[i]) {
			continue
		}
		e, ok := g.decodeEntry(img[g.entryOff(i):])
		if !ok || e.version != version {
			return nil, false
		}
		if e.valid {
			out = append(out, kv{bytes.Clone(e.key), bytes.Clone(e.val)})
		}
	}
	if g.HasCRC {
		c.ep.Compute(cost.Checksum(len(out) * g.Entry))
	}
	return out, true
}
