package chime

import (
	"errors"
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

type writeKind uint8

const (
	opInsert writeKind = iota
	opUpdate
	opDelete
)

// write is every leaf write: the leaf lock (masked CAS returning the
// vacancy bitmap; or a plain CAS of the lock word and, for inserts and
// deletes, a READ of the bitmap word), READ of the neighbourhood (for an
// insert extended to the nearest bucket with room), then one doorbell
// batch of entry WRITEs and the unlocking WRITE. An insert that finds no
// room it can reach re-reads the whole leaf; one that still finds none
// splits.
func (c *client) write(kind writeKind, key, val []byte) error {
	c.ep.Compute(cost.HashKey())
	leaf, parent, err := c.leafFor(key)
	if err != nil {
		return err
	}
	h := c.g.home(key)
	for {
		next, err := c.writeLeaf(kind, leaf, h, key, val)
		if err != nil || next == 0 {
			return err
		}
		parent = c.stale(parent)
		leaf = next
	}
}

// writeLeaf performs the write on leaf under its lock. next is the right
// sibling to try when leaf no longer owns key.
func (c *client) writeLeaf(kind writeKind, leaf transport.GAddr, h int, key, val []byte) (next transport.GAddr, err error) {
	// Inserts place entries by the bitmap and deletes free slots, so
	// both keep it exact; updates leave it as it is.
	withVacancy := kind != opUpdate
	vac, err := c.lockLeaf(leaf, withVacancy)
	if err != nil {
		return 0, err
	}
	unlocked := false
	defer func() {
		if unlocked {
			return
		}
		if uerr := c.ep.Post(c.unlockOp(leaf, vac, withVacancy)); err == nil {
			err = uerr
		}
	}()
	var fp uint16
	if kind == opUpdate && c.hot != nil {
		fp = hotFingerprint(key)
		if done, err := c.speculativeUpdate(leaf, h, fp, key, val, vac); done || err != nil {
			unlocked = done
			return 0, err
		}
	}
	n := c.g.nbr
	if kind == opInsert {
		n = c.reach(h, vac)
	}
	w, err := c.readLocked(leaf, h, n)
	if err != nil {
		return 0, err
	}
	if !w.owns(key) {
		return w.meta.sibling, nil
	}
	i := w.find(key)
	if i >= 0 && kind == opUpdate && c.hot != nil {
		c.hot.record(leaf, w.slot(i), fp) // add_to_cache
	}
	switch {
	case i >= 0 && kind == opDelete:
		w.set(i, nil, nil)
	case i >= 0:
		w.set(i, key, c.comb.CutWrite(val))
	case kind != opInsert:
		c.comb.CutWrite(nil) // absent for as long as the lock is held
		return 0, indexes.ErrNotFound
	default:
		val = c.comb.CutWrite(val)
		placed := w.insert(key, val, h, c.home)
		if !placed && len(w.slots) < c.g.span {
			// The bitmap promised room the neighbourhood cannot reach:
			// read the rest of the leaf.
			if w, err = c.readLocked(leaf, h, c.g.span); err != nil {
				return 0, err
			}
			placed = w.insert(key, val, h, c.home)
		}
		if !placed {
			sep, right, err := c.split(w, key, val)
			if err != nil {
				return 0, err
			}
			unlocked = true
			// The leaf is consistent and unlocked; the parent is
			// updated under its own lock.
			return 0, c.insertSeparator(1, sep, right)
		}
	}
	ops := append(w.writeOps(), c.unlockOp(leaf, w.vacancy(vac), withVacancy))
	unlocked = true
	if err := c.ep.Post(ops...); err != nil {
		return 0, fmt.Errorf("writing leaf %v: %w", leaf, err)
	}
	return 0, nil
}

// speculativeUpdate is the start of CHIME's leaf_node_update under the
// leaf lock: when the hotspot buffer knows a slot of the key's
// neighbourhood, one READ of that entry, and if it holds the key, its
// WRITE and the unlock in one doorbell (done: the lock is released). The
// fences are not checked: the key found in the locked leaf proves the
// leaf owns it. A slot holding another key is forgotten and the update
// goes on with the neighbourhood.
func (c *client) speculativeUpdate(leaf transport.GAddr, h int, fp uint16, key, val []byte, vac uint64) (done bool, err error) {
	slot, ok := c.hotSlot(leaf, h, fp)
	if !ok {
		return false, nil
	}
	e, hit, err := c.readSlot(leaf, slot, key)
	if err != nil {
		return false, err
	}
	if !hit {
		c.hot.forget(leaf, slot)
		return false, nil
	}
	c.hot.record(leaf, slot, fp)
	e = entry{hdr: bumpEntry(e.hdr, true), key: e.key, val: c.comb.CutWrite(val)}
	lo, hi := c.g.slotRange(slot)
	im := image{base: lo, buf: make([]byte, hi-lo)}
	c.g.putSlot(&im, slot, e)
	if err := c.ep.Post(transport.WriteOp(leaf.Add(uint64(lo)), im.buf), c.unlockOp(leaf, vac, false)); err != nil {
		return true, fmt.Errorf("writing leaf %v: %w", leaf, err)
	}
	return true, nil
}

// readLocked reads a window of a leaf this client has locked. No writer
// can tear it, but a reader-side retry costs nothing to keep.
func (c *client) readLocked(leaf transport.GAddr, h, n int) (*window, error) {
	for {
		w, err := c.readWindow(leaf, h, n)
		if !errors.Is(err, errTorn) {
			return w, err
		}
	}
}

// home hashes an entry's key to its home slot, charging the hash.
func (c *client) home(key []byte) int {
	c.ep.Compute(cost.HashKey())
	return c.g.home(key)
}

// reach is how many slots from home h an insert reads: the neighbourhood,
// extended through the first bucket the vacancy bitmap marks as having
// room; the whole leaf when none is marked.
func (c *client) reach(h int, vac uint64) int {
	g := c.g
	for d := range g.span {
		s := (h + d) % g.span
		b := g.bucket(s)
		if vac&(1<<b) == 0 {
			continue
		}
		_, hi := g.bucketSlots(b)
		return min(g.span, max(g.nbr, g.dist(h, hi-1)+1))
	}
	return g.span
}
