package fpbtree

import (
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// WalkLeaves calls fn with the address and table pointer of every leaf,
// in key order, walking the bottom internal level along its siblings. It
// is for recovery, which runs while writers are quiesced.
func (c *Client) WalkLeaves(fn func(leaf transport.GAddr, fp uint64) error) error {
	n, err := c.traverse(make([]byte, c.t.G.K), 1)
	if err != nil {
		return err
	}
	for {
		for _, e := range n.ents {
			if err := fn(e.child, e.fp); err != nil {
				return err
			}
		}
		if n.sibling.IsNil() {
			return nil
		}
		if n, err = c.readNode(n.sibling); err != nil {
			return err
		}
	}
}

// RebuildTable rebuilds a leaf's fingerprint table from the leaf itself
// (DMTree section 4.3: a new primary "reconstructs the fingerprint table
// by validating and synchronizing it based on the key-value data stored in
// remote memory") and WRITEs it, unlocked, to the table's primary as the
// placement now places it.
func (c *Client) RebuildTable(leaf transport.GAddr, fp uint64) error {
	g := &c.t.G
	img, h, err := c.readLeaf(leaf)
	if err != nil {
		return err
	}
	tbl := Table{FPs: make([]byte, g.Span), Version: h.version}
	for i := range g.Span {
		e, ok := g.decodeEntry(img[g.entryOff(i):])
		if !ok {
			return fmt.Errorf("rebuild table of leaf %v: entry %d is torn", leaf, i)
		}
		if e.valid && e.version == h.version {
			tbl.FPs[i] = Fingerprint(e.key)
		}
	}
	c.ep.Compute(int64(g.Span) * cost.HashKey())
	if err := c.t.writeTableTo(c.ep, leaf, fp, &tbl, 0); err != nil {
		return fmt.Errorf("rebuild table of leaf %v: %w", leaf, err)
	}
	return nil
}

// Locate returns the leaf covering key and its table pointer, as the
// client's cache sees them (for tests and tools).
func (c *Client) Locate(key []byte) (leaf transport.GAddr, fp uint64, err error) {
	r, err := c.locate(key)
	return r.leaf, r.fp, err
}
