package sherman

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes/internal/inner"
	"github.com/dmbench/dmbench/transport"
)

// Structure modifications, as Sherman's code makes them: a node that
// fills up is split while it is locked: the new right sibling is written
// first, then the shrunk node with its unlock in one batch; only then is
// the separator inserted into the parent, under the parent's own lock,
// so a writer never holds two locks. Readers that reach the old node
// with a key that moved follow its sibling pointer meanwhile (B-link
// style). Leaves split here; the levels above are package inner's, which
// locks, writes and seals internal nodes through the methods below.

// splitLeaf splits the locked, full leaf img (which already holds the new
// entry): sorted by key, the upper half goes to a new sibling.
func (c *client) splitLeaf(h held, loc inner.Location, img []byte) error {
	l := &c.x.l
	idx := make([]int, 0, l.leafCard)
	for i := range l.leafCard {
		if entryValid(l.entry(img, i)) {
			idx = append(idx, i)
		}
	}
	sort.Slice(idx, func(a, b int) bool {
		return bytes.Compare(l.entryKey(l.entry(img, idx[a])), l.entryKey(l.entry(img, idx[b]))) < 0
	})
	c.Charge(int64(len(idx)) * cost.NodeSearch(len(idx)))
	m, sep := c.leafSplitPoint(img, idx)
	sep = bytes.Clone(sep)

	sibAddr, err := c.AllocNode(l.leafBytes)
	if err != nil {
		return inner.JoinUnlock(err, c.unlock(h))
	}
	sib := c.Sib[:l.leafBytes]
	l.InitNode(sib, 0, sep, l.HighOrNil(img), inner.Sibling(img))
	for j, i := range idx[m:] {
		copy(l.entry(sib, j), l.entry(img, i))
	}
	l.setConsistent(sib)

	old := c.Aux[:l.leafBytes]
	l.InitNode(old, 0, l.Low(img), sep, sibAddr)
	old[inner.OffFront] = img[inner.OffFront]
	for j, i := range idx[:m] {
		copy(l.entry(old, j), l.entry(img, i))
	}
	l.setConsistent(old)
	wasRoot := l.CoversAll(img)
	if c.x.consistency == crc {
		c.ChargeStep(2 * cost.Checksum(len(img)-8))
	}
	if err := c.Write(sibAddr, sib); err != nil {
		return inner.JoinUnlock(fmt.Errorf("writing new leaf %v: %w", sibAddr, err), c.unlock(h))
	}
	if err := c.unlock(h, c.writes(transport.WriteOp(loc.Addr, old))...); err != nil {
		return err
	}
	return c.AddSeparator(loc.Addr, sep, sibAddr, 1, wasRoot)
}

// leafSplitPoint picks where the sorted entries idx of img split: at the
// middle, as Sherman does, or in P-Sherman at the partition bound closest
// to the middle when the entries straddle one, so that leaves come to lie
// inside one partition and need no RDMA synchronisation (DEX picks
// partition bounds to that end; a runtime split is where a tree grown
// without a bulk load gets them).
func (c *client) leafSplitPoint(img []byte, idx []int) (int, []byte) {
	l := &c.x.l
	key := func(j int) []byte { return l.entryKey(l.entry(img, idx[j])) }
	m := len(idx) / 2
	sep := key(m)
	best := -1
	for _, b := range c.x.parts.boundsIn(key(0), key(len(idx)-1)) {
		j := sort.Search(len(idx), func(j int) bool { return bytes.Compare(key(j), b) >= 0 })
		if best < 0 || abs(j-len(idx)/2) < abs(best-len(idx)/2) {
			best, sep = j, b
		}
	}
	if best >= 0 {
		m = best
	}
	return m, sep
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// LockInner takes the lock of the internal node at addr, which its
// parent gave range rng, and READs the node into img (Sherman's
// lock_and_read_page).
func (c *client) LockInner(addr transport.GAddr, rng inner.KeyRange, img []byte) (held, error) {
	h, err := c.lock(addr, c.classOf(rng))
	if err != nil {
		return h, err
	}
	if err := c.Read(img, addr); err != nil {
		return h, inner.JoinUnlock(fmt.Errorf("reading node %v: %w", addr, err), c.unlock(h))
	}
	return h, nil
}

// Unlock releases h, after WRITing img back whole to addr when img is
// not nil (Sherman's write_page_and_unlock).
func (c *client) Unlock(h held, addr transport.GAddr, img []byte) error {
	if img == nil {
		return c.unlock(h)
	}
	return c.unlock(h, c.writes(transport.WriteOp(addr, img))...)
}

// Seal sets a node image's versions and checksum for a whole-node WRITE,
// charging the checksum in the crc variant.
func (c *client) Seal(img []byte) {
	c.x.l.setConsistent(img)
	if c.x.consistency == crc {
		c.ChargeStep(cost.Checksum(len(img) - 8))
	}
}
