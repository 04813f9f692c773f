package fpbtree

import (
	"encoding/binary"
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// readTableAt READs the table block at a (without its lock word), again
// while it is torn. The table is the caller's: its image is read into a
// buffer of its own, since writers change it and merges hold two.
func (c *Client) readTableAt(a transport.GAddr) (Table, error) {
	g := &c.t.G
	buf := make([]byte, g.Table-8)
	for {
		if err := c.ep.Read(buf, a); err != nil {
			return Table{}, fmt.Errorf("read fingerprint table %v: %w", a, err)
		}
		c.ep.Compute(cost.Checksum(g.TableOff + 8))
		if t, ok := g.DecodeTable(buf); ok {
			return t, nil
		}
		c.ep.Backoff(0) // let the writer run on real fabrics; free on sim
	}
}

// primaryTable READs the leaf's authoritative table and refreshes the
// caller's cached copy with it.
func (c *Client) primaryTable(r ref) (Table, error) {
	a, err := c.t.place.Primary(r.leaf, r.fp)
	if err != nil {
		return Table{}, err
	}
	defer c.ep.SetStep(c.label(c.tableStep(a)))
	tbl, err := c.readTableAt(a)
	if err != nil {
		return Table{}, err
	}
	if err := c.storeCopy(r, &tbl); err != nil {
		return Table{}, err
	}
	return tbl, nil
}

// storeCopy writes tbl into the caller's node's cached copy (a local
// access, no verb) when the placement keeps copies.
func (c *Client) storeCopy(r ref, tbl *Table) error {
	a, ok := c.t.place.Copy(c.ep.Node(), r.fp)
	if !ok {
		return nil
	}
	b := c.scratch(c.t.G.Table)
	c.t.G.EncodeTable(b, tbl, 0)
	return c.ep.Write(a, b[:c.t.G.Table-8])
}

// searchTable returns the table a search probes: the caller's cached copy
// when it belongs to r's version (fresh false), else the primary. A cached
// copy aliases c.copyBuf: it is valid until the client's next searchTable.
func (c *Client) searchTable(r ref) (Table, bool, error) {
	defer c.ep.SetStep(c.label(StepFPTraversal))
	if a, ok := c.t.place.Copy(c.ep.Node(), r.fp); ok {
		// A copy never filled, or torn by a concurrent refresh, is a miss.
		if c.copyBuf == nil {
			c.copyBuf = make([]byte, c.t.G.Table-8)
		}
		buf := c.copyBuf
		if err := c.ep.Read(buf, a); err != nil {
			return Table{}, false, fmt.Errorf("read cached fingerprint table %v: %w", a, err)
		}
		c.ep.Compute(cost.Checksum(c.t.G.TableOff + 8))
		if tbl, ok := c.t.G.DecodeTable(buf); ok && tbl.Version == r.version {
			return tbl, false, nil
		}
	}
	tbl, err := c.primaryTable(r)
	return tbl, true, err
}

// lockLeaf takes r's leaf lock: the node's local lock when writes are
// combined (locallock.go), then, unless it was handed over with that, the
// lock word with CAS 0 -> 1, retrying while it is held.
func (c *Client) lockLeaf(r ref) error {
	defer c.ep.SetStep(c.label(StepLocking))
	a, err := c.t.place.Lock(r.leaf, r.fp)
	if err != nil {
		return err
	}
	if c.t.opts.Combine {
		if _, global := c.lockLocal(a); global {
			return nil
		}
	}
	for {
		old, err := c.ep.CAS(a, 0, 1)
		if err != nil {
			c.unlockLocal(a, false)
			return fmt.Errorf("lock leaf %v: %w", r.leaf, err)
		}
		if old == 0 {
			return nil
		}
		c.ep.Backoff(0) // let the holder run on real fabrics; free on sim
	}
}

// unlockLeaf releases r's leaf lock with a WRITE of the lock word, or
// hands it to a local waiter without one.
func (c *Client) unlockLeaf(r ref) error {
	defer c.ep.SetStep(c.label(StepLocking))
	a, err := c.t.place.Lock(r.leaf, r.fp)
	if err != nil {
		return err
	}
	keep := c.keepGlobal(a)
	if !keep {
		var zero [8]byte
		if err := c.ep.Write(a, zero[:]); err != nil {
			return fmt.Errorf("unlock leaf %v: %w", r.leaf, err)
		}
	}
	c.unlockLocal(a, keep)
	return nil
}

// writeTableUnlock writes tbl to the primary and releases the leaf lock:
// one WRITE when the lock word ends the table block (collaborative
// embedded unlocking, section 3.3), else a table WRITE then an unlock
// WRITE; a lock handed over locally is not released. The caller's cached
// copy is refreshed locally.
func (c *Client) writeTableUnlock(r ref, tbl *Table) error {
	g := &c.t.G
	pa, err := c.t.place.Primary(r.leaf, r.fp)
	if err != nil {
		return err
	}
	defer c.ep.SetStep(c.label(c.tableStep(pa)))
	la, err := c.t.place.Lock(r.leaf, r.fp)
	if err != nil {
		return err
	}
	b := c.scratch(g.Table)
	c.ep.Compute(cost.Checksum(g.TableOff + 8))
	if la == pa.Add(uint64(g.LockOffset())) {
		// A lock handed to a local waiter stays set in the WRITE.
		keep := c.keepGlobal(la)
		var lock uint64
		if keep {
			lock = 1
		}
		g.EncodeTable(b, tbl, lock)
		if err := c.ep.Write(pa, b); err != nil {
			return fmt.Errorf("write fingerprint table %v: %w", pa, err)
		}
		c.unlockLocal(la, keep)
	} else {
		g.EncodeTable(b, tbl, 0)
		if err := c.ep.Write(pa, b[:g.Table-8]); err != nil {
			return fmt.Errorf("write fingerprint table %v: %w", pa, err)
		}
		if err := c.unlockLeaf(r); err != nil {
			return err
		}
	}
	return c.storeCopy(r, tbl)
}

// readEntry READs slot i of r's leaf, again while it is torn. The entry's
// key and value alias c.entryBuf: they are valid until the client's next
// readEntry.
func (c *Client) readEntry(r ref, i int) (entry, error) {
	defer c.ep.SetStep(c.label(StepKV))
	g := &c.t.G
	if c.entryBuf == nil {
		c.entryBuf = make([]byte, g.Entry)
	}
	buf := c.entryBuf
	for {
		if err := c.ep.Read(buf, r.leaf.Add(uint64(g.entryOff(i)))); err != nil {
			return entry{}, fmt.Errorf("read entry %d of leaf %v: %w", i, r.leaf, err)
		}
		if g.HasCRC {
			c.ep.Compute(cost.Checksum(g.Entry))
		}
		if e, ok := g.decodeEntry(buf); ok {
			return e, nil
		}
		c.ep.Backoff(0)
	}
}

// writeEntry WRITEs slot i of r's leaf.
func (c *Client) writeEntry(r ref, i int, valid bool, key, val []byte) error {
	defer c.ep.SetStep(c.label(StepKV))
	g := &c.t.G
	buf := c.scratch(g.Entry)
	g.encodeEntry(buf, valid, r.version, key, val)
	if g.HasCRC {
		c.ep.Compute(cost.Checksum(g.Entry))
	}
	if err := c.ep.Write(r.leaf.Add(uint64(g.entryOff(i))), buf); err != nil {
		return fmt.Errorf("write entry %d of leaf %v: %w", i, r.leaf, err)
	}
	return nil
}

// invalidateEntry WRITEs slot i's meta word as empty.
func (c *Client) invalidateEntry(r ref, i int) error {
	defer c.ep.SetStep(c.label(StepKV))
	b := binary.LittleEndian.AppendUint64(nil, entryMeta(false, r.version))
	if c.t.G.HasCRC {
		return c.writeEntry(r, i, false, make([]byte, c.t.G.K), make([]byte, c.t.G.V))
	}
	if err := c.ep.Write(r.leaf.Add(uint64(c.t.G.entryOff(i))), b); err != nil {
		return fmt.Errorf("invalidate entry %d of leaf %v: %w", i, r.leaf, err)
	}
	return nil
}

// scratch returns c.out, grown to n bytes: the image of a table block or
// entry being written. A WRITE returns once it has completed, so the
// buffer is free again when the verb that sends it returns.
func (c *Client) scratch(n int) []byte {
	if cap(c.out) < n {
		c.out = make([]byte, max(n, c.t.G.Table, c.t.G.Entry))
	}
	return c.out[:n]
}
