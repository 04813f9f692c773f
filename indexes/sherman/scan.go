package sherman

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
	addr   transport.GAddr
	cls    class
	img    []byte
	w1, w2 []byte // optlock: lock words read around the leaf
	slot   *localLock
	seq    uint64
	ok     bool
}

// Range calls fn on up to n entries from start on in key order. Like
// Sherman's range_query it takes the leaf pointers from the cached level-1
// node covering the cursor and READs the leaves it needs in one doorbell
// batch; it sorts each leaf's unsorted entries. A leaf the batch caught
// torn is read again alone, and a leaf missing from a stale cached parent
// (split after it was cached: the gap shows as a leaf whose low fence is
// not the previous leaf's high fence) is reached through the previous
// leaf's sibling pointer, so no key is skipped (Sherman issue #18).
func (c *client) Range(start []byte, n int, fn func(key, val []byte) bool) error {
	if n <= 0 {
		return nil
	}
	cursor := bytes.Clone(start)
	if c.x.chainScan {
		return c.scanChain(cursor, n, fn)
	}
	// Leaves to READ for n entries: at first guess the ln 2 ~ 69% fill of
	// a B-tree grown by random inserts (Yao, 1978), then what this scan
	// has seen; one more for the partly used first leaf.
	perLeaf, seen, leaves := max(1, c.x.l.leafCard*69/100), 0, 0
	for range inner.MaxRetries {
		want := (n+perLeaf-1)/perLeaf + 1
		batch, parent, err := c.scanBatch(cursor, want)
		if err != nil {
			return err
		}
		done, stale, err := c.emitBatch(batch, &cursor, &n, fn, &seen, &leaves)
		if err != nil || done {
			return err
		}
		if stale && parent != nil {
			c.DropCached(parent)
		}
		if leaves > 0 && seen > 0 {
			perLeaf = max(1, seen/leaves)
		}
	}
	return fmt.Errorf("scan did not finish after %d batches", inner.MaxRetries)
}

// scanChain is the scan of the DMTree artifact's Sherman (muouim/aefast26
// Sherman/src/Tree.cpp, range_query): the cached level-1 node names the
// leaf covering start, and from there each next leaf is READ through the
// sibling pointer of the last, one READ in flight at a time, until n
// entries are out. Keys a split moves right while the scan runs are met
// again in the leaf that receives them, and emitLeaf skips keys below the
// cursor, so none is returned twice.
func (c *client) scanChain(cursor []byte, n int, fn func(key, val []byte) bool) error {
	l := &c.x.l
	seen := 0
	for range inner.MaxRetries {
		batch, parent, err := c.scanBatch(cursor, 1)
		if err != nil {
			return err
		}
		if err := c.settle(&batch[0]); err != nil {
			return err
		}
		img := batch[0].img
		for inner.Level(img) == 0 && !l.Covers(img, cursor) && bytes.Compare(cursor, l.Low(img)) >= 0 {
			if img, err = c.chase(inner.Sibling(img)); err != nil {
				return err
			}
		}
		if inner.Level(img) != 0 || !l.Covers(img, cursor) {
			if parent != nil {
				c.DropCached(parent)
			}
			continue // a stale path: look the cursor up again
		}
		for {
			if c.emitLeaf(img, cursor, &n, fn, &seen) || inner.Unbounded(img) {
				return nil
			}
			cursor = bytes.Clone(l.High(img))
			if img, err = c.chase(inner.Sibling(img)); err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("scan found no stable first leaf after %d tries", inner.MaxRetries)
}

// scanBatch READs up to want leaves from the one covering cursor on, as
// listed by the level-1 node covering cursor (a tree of one leaf has just
// that leaf), in one doorbell batch, and checks each.
func (c *client) scanBatch(cursor []byte, want int) ([]scanLeaf, *inner.CachedNode, error) {
	l := &c.x.l
	leaves, parent, rootLeaf, err := c.Leaves(cursor, want)
	if err != nil {
		return nil, nil, err
	}
	batch := make([]scanLeaf, len(leaves))
	for i, lf := range leaves {
		batch[i] = scanLeaf{addr: lf.Addr, cls: c.classOf(lf.Rng)}
	}
	if need := len(batch) * l.leafBytes; len(c.scanBuf) < need {
		c.scanBuf = make([]byte, inner.KParaFetch*l.leafBytes)
	}
	words := make([]byte, 16*len(batch))
	ops := c.ops[:0]
	for i := range batch {
		b := &batch[i]
		b.img = c.scanBuf[i*l.leafBytes : (i+1)*l.leafBytes]
		b.w1, b.w2 = words[16*i:16*i+8], words[16*i+8:16*i+16]
		guarded := c.x.consistency == optlock && b.cls == classShared
		var ref lockRef
		if guarded || c.x.parts != nil {
			ref = c.lockOf(b.addr)
		}
		if c.x.parts != nil {
			b.slot = c.x.localTable(c.EP.Node()).slot(ref)
			b.seq = b.slot.seq.Load()
		}
		if guarded {
			ops = append(ops, transport.ReadOp(b.w1, ref.addr))
		}
		ops = append(ops, transport.ReadOp(b.img, b.addr))
		if guarded {
			ops = append(ops, transport.ReadOp(b.w2, ref.addr))
		}
	}
	c.ops = ops
	if err := c.post(ops); err != nil {
		return nil, nil, fmt.Errorf("reading %d leaves: %w", len(batch), err)
	}
	for i := range batch {
		b := &batch[i]
		b.ok = c.valid(b.img, b.cls, b.w1, b.w2, true) && (b.slot == nil || b.seq&1 == 0 && b.slot.seq.Load() == b.seq)
	}
	if rootLeaf && batch[0].ok && !l.CoversAll(batch[0].img) {
		c.ForgetRoot() // the root leaf has split: a new root is above it
	}
	return batch, parent, nil
}

// emitBatch hands the entries of the batch's leaves to fn in key order,
// from *cursor on, moving *cursor to the high fence of each leaf done. It
// reports done when the scan is over (n entries, fn said stop, or the
// last leaf), and stale when the batch showed its parent to be stale.
func (c *client) emitBatch(batch []scanLeaf, cursor *[]byte, n *int, fn func(key, val []byte) bool, seen, leaves *int) (done, stale bool, err error) {
	l := &c.x.l
	var next transport.GAddr // sibling of the last leaf emitted
	for i := 0; ; {
		var img []byte
		if i < len(batch) {
			if err := c.settle(&batch[i]); err != nil {
				return false, false, err
			}
		}
		switch {
		case i < len(batch) && (i == 0 || bytes.Equal(l.Low(batch[i].img), *cursor)):
			img = batch[i].img
			i++
		case i < len(batch) && bytes.Compare(l.Low(batch[i].img), *cursor) < 0:
			i++ // reached already through a sibling pointer
			continue
		case i < len(batch):
			stale = true // a leaf the parent does not list yet
			if img, err = c.chase(next); err != nil {
				return false, false, err
			}
		default:
			return false, stale, nil
		}
		for inner.Level(img) == 0 && !l.Covers(img, *cursor) && bytes.Compare(*cursor, l.Low(img)) >= 0 {
			// The leaf split after its parent was read: the keys from the
			// cursor on are further right.
			stale = true
			if img, err = c.chase(inner.Sibling(img)); err != nil {
				return false, false, err
			}
		}
		if inner.Level(img) != 0 || !l.Covers(img, *cursor) {
			return false, true, nil // a stale path: look the cursor up again
		}
		stop := c.emitLeaf(img, *cursor, n, fn, seen)
		*leaves++
		if stop || inner.Unbounded(img) {
			return true, stale, nil
		}
		*cursor = bytes.Clone(l.High(img))
		next = inner.Sibling(img)
	}
}

// settle reads a batch leaf again, alone, if the batch caught it torn.
func (c *client) settle(b *scanLeaf) error {
	if b.ok {
		return nil
	}
	if err := c.readLeaf(b.img, b.addr, b.cls); err != nil {
		return err
	}
	b.ok = true
	return nil
}

// chase reads the leaf at a, reached through a sibling pointer.
func (c *client) chase(a transport.GAddr) ([]byte, error) {
	img := c.Aux[:c.x.l.leafBytes]
	return img, c.readLeaf(img, a, classShared)
}

// readLeaf reads a whole leaf consistently, entries included.
func (c *client) readLeaf(img []byte, addr transport.GAddr, cls class) error {
	for range inner.MaxRetries {
		if err := c.readNode(img, addr, cls); err != nil {
			return err
		}
		if inner.Level(img) != 0 || !c.checkEntries(cls) || c.entriesConsistent(img) {
			return nil
		}
	}
	return fmt.Errorf("leaf %v still torn after %d reads", addr, inner.MaxRetries)
}

// emitLeaf hands fn the live entries of leaf img at or after from, sorted,
// and reports whether the scan is over.
func (c *client) emitLeaf(img, from []byte, n *int, fn func(key, val []byte) bool, seen *int) bool {
	l := &c.x.l
	var idx []int
	for i := range l.leafCard {
		e := l.entry(img, i)
		if entryValid(e) {
			*seen++
			if bytes.Compare(l.entryKey(e), from) >= 0 {
				idx = append(idx, i)
			}
		}
	}
	c.Charge(cost.LinearScan(l.leafCard))
	sort.Slice(idx, func(a, b int) bool {
		return bytes.Compare(l.entryKey(l.entry(img, idx[a])), l.entryKey(l.entry(img, idx[b]))) < 0
	})
	c.Charge(int64(len(idx)) * cost.NodeSearch(len(idx)))
	for _, i := range idx {
		e := l.entry(img, i)
		*n--
		if !fn(bytes.Clone(l.entryKey(e)), bytes.Clone(l.entryVal(e))) || *n == 0 {
			return true
		}
	}
	return false
}
