package marlin

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes/internal/inner"
	"github.com/dmbench/dmbench/transport"
)

// Structure modifications. A leaf with no free slot to spare is rebuilt
// under the exclusive Spear: its live entries (tombstones dropped) and the
// new key, sorted, either fill the same leaf again when at most half of
// it (a compaction, which reclaims the slots of deleted keys) or are split
// at the middle, Sherman's way: the new right sibling is written first,
// then the shrunk leaf with the Spear's release in one batch, and only
// then is the separator inserted into the parent under the parent's own
// lock, so a writer never holds two locks. Readers that reach the old
// leaf with a key that moved follow its sibling pointer (B-link style).
// Internal nodes keep Sherman's CAS lock, embedded in their first word.

// leafEntry is one live slot of a leaf being rebuilt.
type leafEntry struct {
	key []byte
	ptr uint64
}

// splitLeaf rebuilds the leaf at loc, of which this client holds a share,
// with key's item p in it. When another SMO held the leaf, the share is
// given back and the write starts over with a walk from the root
// (inner.ErrStale): going back to the leaf would cost its hot Spear two
// more FAAs when the key has moved on.
func (c *client) splitLeaf(loc inner.Location, key []byte, p uint64) error {
	l := &c.x.l
	img := c.Buf[:l.leafBytes]
	ok, err := c.acquireExclusive(loc.Addr, img)
	if err != nil {
		return err
	}
	if !ok {
		return inner.ErrStale
	}
	var live []leafEntry
	replaced := false
	for i := range l.span {
		ptr := l.slotPtr(img, i)
		if !isItem(ptr) {
			continue
		}
		e := leafEntry{key: l.slotKey(img, i), ptr: ptr}
		if bytes.Equal(e.key, key) {
			e.ptr, replaced = p, true
		}
		live = append(live, e)
	}
	if !replaced {
		live = append(live, leafEntry{key: key, ptr: p})
	}
	sort.Slice(live, func(a, b int) bool { return bytes.Compare(live[a].key, live[b].key) < 0 })
	c.Charge(int64(len(live)) * cost.NodeSearch(len(live)))

	old := c.Aux[:l.leafBytes]
	if len(live) <= l.span/2 {
		l.InitNode(old, 0, l.Low(img), l.HighOrNil(img), inner.Sibling(img))
		old[inner.OffFront] = img[inner.OffFront]
		fillLeaf(l, old, live)
		inner.SetVersions(old)
		c.ops = append(c.ops[:0], transport.WriteOp(loc.Addr.Add(inner.OffFront), old[inner.OffFront:]), releaseExclusiveOp(loc.Addr))
		if err := c.post(c.ops); err != nil {
			return fmt.Errorf("writing compacted leaf %v: %w", loc.Addr, err)
		}
		return nil
	}
	m := len(live) / 2
	sep := bytes.Clone(live[m].key)
	sibAddr, err := c.AllocNode(l.leafBytes)
	if err != nil {
		return inner.JoinUnlock(err, c.post([]transport.Op{releaseExclusiveOp(loc.Addr)}))
	}
	sib := c.Sib[:l.leafBytes]
	l.InitNode(sib, 0, sep, l.HighOrNil(img), inner.Sibling(img))
	fillLeaf(l, sib, live[m:])
	inner.SetVersions(sib)

	l.InitNode(old, 0, l.Low(img), sep, sibAddr)
	old[inner.OffFront] = img[inner.OffFront]
	fillLeaf(l, old, live[:m])
	inner.SetVersions(old)
	wasRoot := l.CoversAll(img)
	if err := c.Write(sibAddr, sib); err != nil {
		return inner.JoinUnlock(fmt.Errorf("writing new leaf %v: %w", sibAddr, err), c.post([]transport.Op{releaseExclusiveOp(loc.Addr)}))
	}
	c.ops = append(c.ops[:0], transport.WriteOp(loc.Addr.Add(inner.OffFront), old[inner.OffFront:]), releaseExclusiveOp(loc.Addr))
	if err := c.post(c.ops); err != nil {
		return fmt.Errorf("writing split leaf %v: %w", loc.Addr, err)
	}
	return c.AddSeparator(loc.Addr, sep, sibAddr, 1, wasRoot)
}

// fillLeaf writes entries into the first slots of leaf image b.
func fillLeaf(l *layout, b []byte, entries []leafEntry) {
	for i, e := range entries {
		l.setSlotPtr(b, i, e.ptr)
		copy(l.slotKey(b, i), e.key)
	}
}

// LockInner takes the embedded CAS lock of the internal node at a and
// READs the node into img (Sherman's lock_and_read_page).
func (c *client) LockInner(a transport.GAddr, _ inner.KeyRange, img []byte) (struct{}, error) {
	for i := range inner.MaxRetries {
		if i > 0 {
			c.backoff()
		}
		got, err := c.CAS(a.Add(offLock), 0, c.tag)
		if err != nil {
			return struct{}{}, fmt.Errorf("locking node %v: %w", a, err)
		}
		if got == 0 {
			if err := c.Read(img, a); err != nil {
				return struct{}{}, inner.JoinUnlock(fmt.Errorf("reading node %v: %w", a, err), c.Unlock(struct{}{}, a, nil))
			}
			return struct{}{}, nil
		}
	}
	return struct{}{}, fmt.Errorf("node %v still locked after %d CASes", a, inner.MaxRetries)
}

// Unlock WRITEs img (when not nil) to the internal node at a from its
// front version on, and then a zero lock word, in one batch (Sherman's
// write_page_and_unlock). img's own lock word is cleared, as the release
// clears the node's, for the copy the index cache keeps.
func (c *client) Unlock(_ struct{}, a transport.GAddr, img []byte) error {
	c.ops = c.ops[:0]
	if img != nil {
		binary.LittleEndian.PutUint64(img[offLock:], 0)
		c.ops = append(c.ops, transport.WriteOp(a.Add(inner.OffFront), img[inner.OffFront:]))
	}
	var zero [8]byte
	c.ops = append(c.ops, transport.WriteOp(a.Add(offLock), zero[:]))
	if err := c.post(c.ops); err != nil {
		return fmt.Errorf("writing and unlocking node %v: %w", a, err)
	}
	return nil
}

// Seal sets a node image's versions for a whole-node WRITE.
func (c *client) Seal(img []byte) { inner.SetVersions(img) }
