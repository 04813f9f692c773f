package dex

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

// Logical repartitioning (section 4, Figure 10): the upper part of a
// compute node's range moves to another compute node. Data stays where it
// is; the giving node flushes its dirty pages of the moved range with one
// thread and hands the range over by RPC. doc.go lists the steps and their
// verbs.

var _ indexes.Repartitioner = (*Index)(nil)

// flushBatch is how many dirty pages one doorbell writes back.
const flushBatch = 16

// Repartition moves the keys at or above split of compute node from's
// range to compute node to. The first key moved is the nearest leaf
// boundary at or above split (a separator of a level-1 node, section 4:
// leaves never cross partitions). It runs on ep, a thread of from.
func (x *Index) Repartition(ep transport.Endpoint, from, to int, split []byte) (bound []byte, err error) {
	if err := x.checkRepartition(ep, from, to, split); err != nil {
		return nil, err
	}
	c := x.newClient(ep)
	cn := c.cn
	// Repartitionings run one at a time, so the partitions read below
	// stay current until this one installs the next: this instance's
	// threads queue on moving, compute nodes on the partition word.
	x.moving.Lock(ep)
	defer x.moving.Unlock()
	parts, err := c.lockPartitions()
	if err != nil {
		return nil, err
	}
	defer func() {
		// A refused or failed move leaves the published version.
		if err != nil {
			err = errors.Join(err, x.setPartitionWord(ep, parts.version))
		}
	}()
	cn.thaw.Lock(ep)
	defer cn.thaw.Unlock()
	// Step 1 (doc.go): operations in flight finish; later ones on
	// [split, high) wait.
	cn.own.Lock(ep)
	i := parts.index(split)
	low, high := parts.bounds(i)
	if parts.owners[i] != from {
		cn.own.Unlock()
		return nil, fmt.Errorf("dex: repartition from compute node %d: split %x lies in [%x, %x), compute node %d's range",
			from, split, low, high, parts.owners[i])
	}
	frozen := &keyRange{low: bytes.Clone(split), high: high}
	cn.frozen.Store(frozen)
	cn.own.Unlock()
	defer cn.frozen.Store(nil)
	// Step 2: the bulk of the flush runs while the rest of the range is
	// served.
	if err := c.flush(frozen); err != nil {
		return nil, fmt.Errorf("dex: repartition from compute node %d to %d at %x: %w", from, to, split, err)
	}
	cn.own.Lock(ep)
	defer cn.own.Unlock()
	bound, err = c.handOver(parts, from, to, low, frozen)
	if err != nil {
		return nil, fmt.Errorf("dex: repartition from compute node %d to %d at %x: %w", from, to, split, err)
	}
	return bound, nil
}

func (x *Index) checkRepartition(ep transport.Endpoint, from, to int, split []byte) error {
	n := len(x.comps)
	switch {
	case from < 0 || from >= n || to < 0 || to >= n:
		return fmt.Errorf("dex: repartition from compute node %d to %d: there are %d compute nodes (0 to %d)", from, to, n, n-1)
	case from == to:
		return fmt.Errorf("dex: repartition from compute node %d to itself", from)
	case !x.opt.partitioned:
		return fmt.Errorf("dex: repartition from compute node %d to %d: partitioning=false, every compute node serves every key", from, to)
	case len(split) != x.l.ks:
		return fmt.Errorf("dex: repartition from compute node %d to %d: split %x is %d bytes, keys are %d", from, to, split, len(split), x.l.ks)
	case ep.Node() != x.comps[from]:
		return fmt.Errorf("dex: repartition from compute node %d (node id %d) runs on one of its threads, not on node id %d", from, x.comps[from], ep.Node())
	case x.cn[from] == nil:
		return fmt.Errorf("dex: repartition from compute node %d runs on an instance that serves it, not on one that serves compute nodes %v", from, x.env.Compute)
	}
	return nil
}

// handOver is the part of a repartitioning with this compute node
// quiesced: the last dirty pages of frozen are flushed, the boundary is
// found, nodes that start to straddle it become shared, the receiving
// node adopts the range and installs the new partitions, both nodes'
// partitions are published, and the pages of the moved range are
// dropped.
func (c *client) handOver(parts *partitions, from, to int, low []byte, frozen *keyRange) ([]byte, error) {
	x, cn := c.x, c.cn
	// Step 3: splits of leaves below split may have dirtied pages of
	// frozen since.
	if err := c.flush(frozen); err != nil {
		return nil, err
	}
	path, bound, err := c.boundPath(parts, frozen.low, low, frozen.high)
	if err != nil {
		return nil, err
	}
	next, _, err := parts.move(from, to, bound)
	if err != nil {
		return nil, err
	}
	table, err := next.table(x.l.ks)
	if err != nil {
		return nil, err
	}
	// Owned nodes straddling the bound become shared: bumping their
	// version makes a cached copy anywhere older than the memory pool's.
	for _, p := range path {
		if !(p.high == nil || bytes.Compare(bound, p.high) < 0) || bytes.Compare(p.low, bound) >= 0 ||
			parts.shared(p.low, p.high) {
			continue
		}
		v, err := c.bumpVersion(p.a, p.v)
		if err != nil {
			return nil, err
		}
		if e, ok := cn.mt.get(c.ep, p.a); ok && e.f != nil {
			f := e.f
			f.lockAny(c.ep)
			if transport.GAddr(f.addr.Load()) == p.a {
				f.mu.Lock()
				f.data.setLockWord(v)
				f.mu.Unlock()
				f.rver.Store(v)
			}
			f.unlock()
		}
	}
	// Step 4: the new partitions are staged in memory for a receiving
	// node whose instance knows older ones; it re-reads its stale copies
	// and installs them while both nodes are quiesced. This node installs
	// them too and publishes them, before any operation it turns away
	// sends a compute node to read them.
	if err := c.ep.Write(x.tableAddr(next.version), table); err != nil {
		return nil, fmt.Errorf("dex: stage partitions version %d: %w", next.version, err)
	}
	req := binary.LittleEndian.AppendUint16(nil, uint16(from))
	req = binary.LittleEndian.AppendUint32(req, uint32(next.version))
	req = append(req, bound...)
	if _, err := c.ep.Call(x.comps[to], methodAdopt, req); err != nil {
		return nil, fmt.Errorf("dex: hand [%x, %x) to compute node %d: %w", bound, frozen.high, to, err)
	}
	x.install(next)
	if err := x.setPartitionWord(c.ep, next.version); err != nil {
		return nil, err
	}
	// Step 5: this node's pages of the moved range go.
	c.drop(&keyRange{low: bound, high: frozen.high})
	return bound, nil
}

// pathNode is a node on the path to a key as the memory pool holds it.
type pathNode struct {
	a         transport.GAddr
	v         uint64 // its lock word
	low, high []byte
}

// boundPath reads the path to split from the root pointer down to level 1
// and returns it with the first leaf boundary at or above split strictly
// inside [low, high): a separator of the level-1 node covering split, or
// its high fence. This compute node's dirty pages on the path have been
// flushed, so the memory pool is current; a shared node changed by
// another compute node on the way makes the walk start again.
func (c *client) boundPath(parts *partitions, split, low, high []byte) ([]pathNode, []byte, error) {
	x, l := c.x, &c.x.l
	img := make(node, NodeBytes)
	for attempt := 0; ; attempt++ {
		c.retry(attempt)
		a, err := x.readRoot(c.ep)
		if err != nil {
			return nil, nil, err
		}
		clow, chigh := make([]byte, l.ks), []byte(nil)
		var path []pathNode
		for {
			if err := x.readNode(c.ep, a, parts.shared(clow, chigh), img); err != nil {
				return nil, nil, err
			}
			c.ep.Compute(cost.NodeSearch(img.count()))
			if !l.covers(img, split) {
				break
			}
			path = append(path, pathNode{a: a, v: img.lockWord(), low: bytes.Clone(l.low(img)), high: bytes.Clone(l.highKey(img))})
			if img.level() == 0 {
				return nil, nil, fmt.Errorf("the root is a leaf: no leaf boundary in [%x, %x)", low, high)
			}
			if img.level() > 1 {
				i := l.innerFind(img, split)
				lo, hi := l.childRange(img, i)
				clow, chigh = bytes.Clone(lo), bytes.Clone(hi)
				a = transport.GAddr(l.child(img, i))
				continue
			}
			bound := bytes.Clone(l.highKey(img))
			for i := 1; i < img.count(); i++ {
				if k := l.innerKey(img, i); bytes.Compare(k, split) >= 0 && bytes.Compare(k, low) > 0 {
					bound = bytes.Clone(k)
					break
				}
			}
			if bound == nil || high != nil && bytes.Compare(bound, high) >= 0 {
				return nil, nil, fmt.Errorf("no leaf boundary at or above %x inside [%x, %x)", split, low, high)
			}
			return path, bound, nil
		}
	}
}

// bumpVersion moves the unlocked lock word v of node a to v+2 with one
// CAS, or under the RDMA lock if it moved since it was read.
func (c *client) bumpVersion(a transport.GAddr, v uint64) (uint64, error) {
	x := c.x
	if v&lockBit == 0 {
		old, err := c.ep.CAS(a, v, v+2)
		if err != nil {
			return 0, fmt.Errorf("dex: bump version of node %v: %w", a, err)
		}
		if old == v {
			return v + 2, nil
		}
	}
	lv, err := x.lockRemote(c.ep, a)
	if err != nil {
		return 0, err
	}
	return lv + 2, x.releaseRemote(c.ep, a, lv+2)
}

// flush writes back every dirty cached page intersecting r from this one
// thread, as the single flush thread of section 8.3 (Figure 10) does.
// Pages it can lock at once go out flushBatch WRITEs to a doorbell; a
// page another thread holds is waited for afterwards while holding no
// other page, so the flush cannot deadlock with a thread that locks a
// parent and then its child.
func (c *client) flush(r *keyRange) error {
	cn := c.cn
	frames := cn.frames[:min(int(cn.used.Load()), len(cn.frames))]
	c.ep.Compute(cost.LinearScan(len(frames)))
	var batch, busy []*frame
	var ops []transport.Op
	post := func() error {
		if len(ops) == 0 {
			return nil
		}
		err := c.ep.Post(ops...)
		for _, f := range batch {
			if err == nil {
				f.dirty.Store(false)
			}
			f.unlock()
		}
		batch, ops = batch[:0], ops[:0]
		if err != nil {
			return fmt.Errorf("dex: flush dirty pages: %w", err)
		}
		return nil
	}
	for _, f := range frames {
		if !c.flushable(f, r) {
			continue
		}
		if !f.tryLock() {
			busy = append(busy, f)
			continue
		}
		if !c.flushable(f, r) {
			f.unlock()
			continue
		}
		f.mu.RLock()
		img := c.unswizzled(f)
		f.mu.RUnlock()
		c.ep.Compute(cost.Copy(NodeBytes))
		ops = append(ops, transport.WriteOp(transport.GAddr(f.addr.Load()).Add(8), img[8:]))
		batch = append(batch, f)
		if len(batch) == flushBatch {
			if err := post(); err != nil {
				return err
			}
		}
	}
	if err := post(); err != nil {
		return err
	}
	for _, f := range busy {
		f.lockAny(c.ep)
		if c.flushable(f, r) {
			f.mu.RLock()
			img := c.unswizzled(f)
			f.mu.RUnlock()
			if err := c.x.writeBody(c.ep, transport.GAddr(f.addr.Load()), img); err != nil {
				f.unlock()
				return err
			}
			f.dirty.Store(false)
		}
		f.unlock()
	}
	return nil
}

// flushable reports whether f holds a dirty page intersecting r.
func (c *client) flushable(f *frame, r *keyRange) bool {
	l := &c.x.l
	if f.state.Load() == stateFree || !f.dirty.Load() {
		return false
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	return r.intersects(l.low(f.data), l.highKey(f.data))
}

// drop frees every cached page wholly inside r, which a flush has left
// clean, children before parents (the path-aware order of section 5.3),
// unswizzling the pointer to each in a parent that stays. The compute
// node is quiesced; the frames go to its shared free list.
func (c *client) drop(r *keyRange) {
	cn, l := c.cn, &c.x.l
	frames := cn.frames[:min(int(cn.used.Load()), len(cn.frames))]
	c.ep.Compute(cost.LinearScan(len(frames)))
	var byLevel [][]*frame
	for _, f := range frames {
		if f.state.Load() == stateFree {
			continue
		}
		f.mu.RLock()
		lv, in := f.data.level(), r.holds(l.low(f.data), l.highKey(f.data))
		f.mu.RUnlock()
		if !in {
			continue
		}
		for len(byLevel) <= lv {
			byLevel = append(byLevel, nil)
		}
		byLevel[lv] = append(byLevel[lv], f)
	}
	for _, fs := range byLevel {
		for _, f := range fs {
			f.lockAny(c.ep)
			a := f.addr.Load()
			if p := f.parent.Load(); p != nil {
				p.mu.Lock()
				if p.data.level() > 0 {
					i := l.innerFind(p.data, l.low(f.data))
					if i < p.data.count() && l.child(p.data, i) == swizzled|uint64(f.id) {
						l.setChild(p.data, i, a)
					}
				}
				p.mu.Unlock()
			}
			cn.mt.drop(transport.GAddr(a), f)
			c.release(f)
			f.unlock()
			cn.freedMu.Lock()
			cn.freed = append(cn.freed, f)
			cn.freedMu.Unlock()
		}
	}
}

// serveAdopt runs on the receiving compute node: with its operations
// drained, it brings its cached copies of nodes the move makes its own up
// to date and installs the new partitions, of version v. It makes them
// from the ones it knows when those are of version v-1, as the giving
// node's, and otherwise reads them where the giving node staged them.
func (x *Index) serveAdopt(ep transport.Endpoint, req []byte) ([]byte, error) {
	if len(req) != 6+x.l.ks {
		return nil, fmt.Errorf("dex: adopt request of %d bytes, want %d", len(req), 6+x.l.ks)
	}
	from, v, bound := int(binary.LittleEndian.Uint16(req)), uint64(binary.LittleEndian.Uint32(req[2:])), req[6:]
	c := x.handlerClient(ep)
	cn := c.cn
	cn.own.Lock(ep)
	defer cn.own.Unlock()
	old := x.parts.Load()
	var next *partitions
	var moved keyRange
	var err error
	if old.version+1 == v {
		next, moved, err = old.move(from, cn.idx, bound)
	} else if next, err = x.staged(ep, v); err == nil {
		// Every compute node's own ranges are current in its instance,
		// so old and next differ in this node's ranges by the move
		// alone: the cached nodes to re-read are the same around the
		// range this node owns from bound on.
		moved = keyRange{low: bound, high: next.limit(bound)}
	}
	if err != nil {
		return nil, err
	}
	if err := c.adopt(old, next, &moved); err != nil {
		return nil, fmt.Errorf("dex: compute node %d adopts [%x, %x): %w", cn.idx, moved.low, moved.high, err)
	}
	x.install(next)
	return []byte{fwdOK}, nil
}

// adopt re-reads every cached inner node that was shared under old and
// is this compute node's own under next, inside or around the moved
// range: owned nodes are never refreshed (section 4), so a stale copy
// would route keys wrongly for good.
func (c *client) adopt(old, next *partitions, moved *keyRange) error {
	x, l, cn := c.x, &c.x.l, c.cn
	frames := cn.frames[:min(int(cn.used.Load()), len(cn.frames))]
	c.ep.Compute(cost.LinearScan(len(frames)))
	fresh := make(node, NodeBytes)
	for _, f := range frames {
		if f.state.Load() == stateFree {
			continue
		}
		f.mu.RLock()
		low, high := bytes.Clone(l.low(f.data)), bytes.Clone(l.highKey(f.data))
		inner := f.data.level() > 0
		f.mu.RUnlock()
		if !inner || !moved.intersects(low, high) || !old.shared(low, high) || next.shared(low, high) {
			continue
		}
		a := transport.GAddr(f.addr.Load())
		if err := x.readNode(c.ep, a, true, fresh); err != nil {
			return err
		}
		f.lockAny(c.ep)
		if transport.GAddr(f.addr.Load()) == a {
			f.mu.Lock()
			c.replaceImage(f, fresh)
			f.mu.Unlock()
		}
		f.unlock()
	}
	return nil
}
