package fpbtree

import (
	"bytes"
	"slices"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/combine"
)

// fingerprint hashes key to its fingerprint.
func (c *Client) fingerprint(key []byte) byte {
	defer c.ep.SetStep(c.label(StepFPTraversal))
	c.ep.Compute(cost.HashKey())
	return Fingerprint(key)
}

// probe lists the slots of tbl whose fingerprint is fp. The list is
// c.hits: valid until the client's next probe.
func (c *Client) probe(tbl *Table, fp byte) []int {
	defer c.ep.SetStep(c.label(StepFPTraversal))
	c.ep.Compute(cost.FingerprintProbe(c.t.G.Span))
	c.hits = cost.ProbeFingerprints(tbl.FPs, fp, c.hits[:0])
	return c.hits
}

// search is one search without read delegation: the table (the cached
// copy when it is current, else the primary) locates the slot, one entry
// READ returns it. A fingerprint missing from, or misleading in, a cached
// copy sends the search to the primary (section 3.2.2); a version that
// disagrees with the cached internal entry refreshes the cache.
func (c *Client) search(key []byte) ([]byte, bool, error) {
	fp := c.fingerprint(key)
	r, err := c.locate(key)
	if err != nil {
		return nil, false, err
	}
	primary := false
	for {
		var tbl Table
		fresh := true
		c.comb.CutRead() // the READs below decide the delegated answer
		if primary {
			tbl, err = c.primaryTable(r)
		} else {
			tbl, fresh, err = c.searchTable(r)
		}
		if err != nil {
			return nil, false, err
		}
		seen := tbl.Version
		var val []byte
		found := false
		if seen == r.version {
			if found, val, seen, err = c.probeEntries(r, &tbl, key, fp); err != nil {
				return nil, false, err
			}
		}
		switch {
		case seen != r.version:
			if r, err = c.resolve(r, key, seen); err != nil {
				return nil, false, err
			}
		case found:
			return val, true, nil
		case fresh:
			return nil, false, nil
		default:
			primary = true
		}
	}
}

// probeEntries READs the entries whose fingerprint matches key's until
// one holds key; seen is the version of the last entry read (r.version
// unless the leaf changed).
func (c *Client) probeEntries(r ref, tbl *Table, key []byte, fp byte) (found bool, val []byte, seen uint64, err error) {
	for _, i := range c.probe(tbl, fp) {
		e, err := c.readEntry(r, i)
		if err != nil {
			return false, nil, 0, err
		}
		if e.version != r.version {
			return false, nil, e.version, nil
		}
		if e.valid && bytes.Equal(e.key, key) {
			return true, bytes.Clone(e.val), r.version, nil
		}
	}
	return false, nil, r.version, nil
}

// writeKind is the write a locked leaf performs.
type writeKind uint8

const (
	kindInsert writeKind = iota
	kindUpdate
	kindDelete
)

// write performs an insert, update or delete under the leaf lock: lock,
// READ the primary table, READ the entries whose fingerprint matches, then
// WRITE the entry and either WRITE the table (which unlocks) or WRITE the
// unlock alone. A full leaf splits; an emptied leaf merges.
func (c *Client) write(kind writeKind, key, val []byte) error {
	fp := c.fingerprint(key)
	r, err := c.locate(key)
	if err != nil {
		return err
	}
	for {
		if err := c.lockLeaf(r); err != nil {
			return err
		}
		tbl, err := c.primaryTable(r)
		if err != nil {
			return err
		}
		if tbl.Version != r.version {
			if err := c.unlockLeaf(r); err != nil {
				return err
			}
			if r, err = c.resolve(r, key, tbl.Version); err != nil {
				return err
			}
			continue
		}
		slot := -1
		for _, i := range c.probe(&tbl, fp) {
			e, err := c.readEntry(r, i)
			if err != nil {
				return err
			}
			if e.valid && bytes.Equal(e.key, key) {
				slot = i
				break
			}
		}
		switch {
		case slot >= 0 && kind == kindDelete:
			return c.deleteSlot(r, &tbl, slot)
		case slot >= 0:
			if err := c.writeEntry(r, slot, true, key, c.comb.CutWrite(val)); err != nil {
				return err
			}
			return c.unlockLeaf(r)
		case kind != kindInsert:
			c.comb.CutWrite(nil) // absent for as long as the lock is held
			if err := c.unlockLeaf(r); err != nil {
				return err
			}
			return indexes.ErrNotFound
		}
		val = c.comb.CutWrite(val)
		empty := bytes.IndexByte(tbl.FPs, 0)
		if empty < 0 {
			return c.split(r, &tbl, key, val)
		}
		if err := c.writeEntry(r, empty, true, key, val); err != nil {
			return err
		}
		tbl.FPs[empty] = fp
		return c.writeTableUnlock(r, &tbl)
	}
}

// deleteSlot frees slot i (entry first, then its fingerprint, so a freed
// fingerprint always means an invalid entry) and merges the leaf into its
// right neighbour's place when it is left with no entries.
func (c *Client) deleteSlot(r ref, tbl *Table, i int) error {
	if err := c.invalidateEntry(r, i); err != nil {
		return err
	}
	tbl.FPs[i] = fpFreed
	if !slices.ContainsFunc(tbl.FPs, occupied) && !r.inf {
		merged, err := c.merge(r, tbl)
		if err != nil || merged {
			return err
		}
	}
	return c.writeTableUnlock(r, tbl)
}

// Search returns key's value.
func (c *Client) Search(key []byte) ([]byte, bool, error) {
	return c.comb.Search(key, func() ([]byte, bool, error) { return c.search(key) })
}

// Insert adds key or replaces its value.
func (c *Client) Insert(key, val []byte) error {
	return c.comb.Write(combine.Insert, key, val, func() error { return c.write(kindInsert, key, val) })
}

// Update replaces key's value.
func (c *Client) Update(key, val []byte) error {
	return c.comb.Write(combine.Update, key, val, func() error { return c.write(kindUpdate, key, val) })
}

// Delete removes key.
func (c *Client) Delete(key []byte) error { return c.write(kindDelete, key, nil) }
