package dex

import (
	"bytes"
	"encoding/binary"

	"github.com/dmbench/dmbench/transport"
)

// unswizzled copies a cached image with every child pointer made global
// again, for writing to the memory pool.
func (c *client) unswizzled(f *frame) node {
	l := &c.x.l
	img := append(node(nil), f.data...)
	if img.level() > 0 {
		for i := range img.count() {
			if p := l.child(img, i); p&swizzled != 0 {
				l.setChild(img, i, c.cn.frames[p&^swizzled].addr.Load())
			}
		}
	}
	return img
}

// splitOutcome is what an attempt to split a cached child came to.
type splitOutcome int

const (
	// splitDone: f was split and its new sibling admitted.
	splitDone splitOutcome = iota
	// splitLost: f or p changed, or no frame was free; nothing changed.
	splitLost
	// splitParentFull: the owned parent p is full; top-down eager
	// splitting reaches it first on the next descent.
	splitParentFull
	// splitStale: the shared parent's cached copy is out of date or full
	// in the memory pool; the shared path must be refreshed and split.
	splitStale
)

// splitChild splits the full owned node f under its cached parent p
// (section 7, eager split) and returns errRestart whatever the outcome,
// since the descent that found f full must start again, or the error that
// stopped it. A stale shared parent is refreshed (and split) from the
// remote root first, once the cached frames are unlocked.
func (c *client) splitChild(p *frame, pv uint64, f *frame, v uint64, key []byte) error {
	out, err := c.trySplitChild(p, pv, f, v)
	switch {
	case err != nil:
		return err
	case out == splitStale:
		return c.refreshSplit(key)
	}
	return errRestart
}

// trySplitChild makes one attempt at the split with p and f locked. The
// new right sibling is admitted with the swizzled children it takes over,
// so cached paths stay contiguous. When p is shared, its RDMA lock is
// taken and its fresh copy read first; the split proceeds only if the
// cached p is up to date and not full in the memory pool. Every lock it
// takes is released on return, on every path.
func (c *client) trySplitChild(p *frame, pv uint64, f *frame, v uint64) (out splitOutcome, err error) {
	x, l, cn := c.x, &c.x.l, c.cn
	nf := c.getFrame()
	if nf == nil {
		return splitLost, nil
	}
	defer func() {
		if out != splitDone {
			c.putFree(nf)
		}
	}()
	if !p.lock(c.ep, pv) {
		return splitLost, nil
	}
	defer p.unlock()
	if !f.lock(c.ep, v) {
		return splitLost, nil
	}
	defer f.unlock()
	p.mu.RLock()
	pshared := x.parts.Load().shared(l.low(p.data), l.highKey(p.data))
	pfull := l.full(p.data)
	p.mu.RUnlock()
	if !pshared && pfull {
		return splitParentFull, nil
	}
	pa := transport.GAddr(p.addr.Load())
	var fresh node
	var rv uint64
	if pshared {
		if rv, err = x.lockRemote(c.ep, pa); err != nil {
			return splitLost, err
		}
		// Until p's image is written back with the new entry, every exit
		// releases p's RDMA lock unchanged.
		written := false
		defer func() {
			if !written {
				if rerr := x.releaseRemote(c.ep, pa, rv); err == nil {
					err = rerr
				}
			}
		}()
		fresh = make(node, NodeBytes)
		if err := c.ep.Read(fresh, pa); err != nil {
			return splitLost, err
		}
		if rv != p.rver.Load() || l.full(fresh) {
			return splitStale, nil
		}
		defer func() { written = out == splitDone }()
	}
	fa := transport.GAddr(f.addr.Load())
	na, err := x.alloc(c.ep, x.placement(f.data.level(), fa.Node()))
	if err != nil {
		return splitLost, err
	}
	nf.lockAny(c.ep)
	defer nf.unlock()
	f.mu.Lock()
	nf.mu.Lock()
	clear(nf.data)
	sep := l.splitInto(f.data, nf.data)
	nf.data.setSelf(uint64(na))
	nf.mu.Unlock()
	f.mu.Unlock()
	if nf.data.level() > 0 {
		for i := range nf.data.count() {
			if q := l.child(nf.data, i); q&swizzled != 0 {
				cn.frames[q&^swizzled].parent.Store(nf)
			}
		}
	}
	nf.addr.Store(uint64(na))
	nf.parent.Store(p)
	nf.state.Store(stateHot)
	f.dirty.Store(true)
	nf.dirty.Store(true)
	if pshared {
		// Other compute nodes follow p's new entry: the sibling must be
		// in the memory pool first.
		if err := c.ep.Write(na, c.unswizzled(nf)); err != nil {
			return splitDone, err
		}
		nf.dirty.Store(false)
		fresh.setLockWord(rv + 2)
		l.innerInsertAt(fresh, l.innerFind(fresh, sep)+1, sep, uint64(na))
		if err := x.unlockRemote(c.ep, pa, fresh); err != nil {
			return splitDone, err
		}
		p.rver.Store(rv + 2)
	} else {
		p.dirty.Store(true)
	}
	p.mu.Lock()
	l.innerInsertAt(p.data, l.innerFind(p.data, sep)+1, sep, swizzled|uint64(nf.id))
	p.mu.Unlock()
	cn.mt.set(na, nf)
	return splitDone, nil
}

// splitRoot splits a full root owned by this compute node alone: the old
// root keeps the lower half, a new sibling and a new root are allocated
// near it, all three are written, and the root pointer is swung.
func (c *client) splitRoot(f *frame, v uint64) error {
	x, l, cn := c.x, &c.x.l, c.cn
	nf, rf := c.getFrame(), c.getFrame()
	free := func() {
		for _, g := range []*frame{nf, rf} {
			if g != nil {
				c.putFree(g)
			}
		}
	}
	if nf == nil || rf == nil {
		free()
		return errRestart
	}
	cn.rootMu.Lock(c.ep)
	defer cn.rootMu.Unlock()
	if cn.root.Load() != f || !f.lock(c.ep, v) {
		free()
		return errRestart
	}
	defer f.unlock()
	fa := transport.GAddr(f.addr.Load())
	lv := f.data.level()
	na, err := x.alloc(c.ep, x.placement(lv, fa.Node()))
	if err != nil {
		free()
		return err
	}
	ra, err := x.alloc(c.ep, x.placement(lv+1, fa.Node()))
	if err != nil {
		free()
		return err
	}
	nf.lockAny(c.ep)
	defer nf.unlock()
	rf.lockAny(c.ep)
	defer rf.unlock()
	f.mu.Lock()
	nf.mu.Lock()
	clear(nf.data)
	sep := l.splitInto(f.data, nf.data)
	nf.data.setSelf(uint64(na))
	nf.mu.Unlock()
	low := bytes.Clone(l.low(f.data))
	f.mu.Unlock()
	if lv > 0 {
		for i := range nf.data.count() {
			if q := l.child(nf.data, i); q&swizzled != 0 {
				cn.frames[q&^swizzled].parent.Store(nf)
			}
		}
	}
	rf.mu.Lock()
	clear(rf.data)
	rf.data.setLevel(lv + 1)
	rf.data.setSelf(uint64(ra))
	l.setFences(rf.data, low, nil)
	l.innerInsertAt(rf.data, 0, low, uint64(fa))
	l.innerInsertAt(rf.data, 1, sep, uint64(na))
	rf.mu.Unlock()
	for _, w := range []struct {
		a   transport.GAddr
		img node
	}{{na, c.unswizzled(nf)}, {fa, c.unswizzled(f)}, {ra, rf.data}} {
		if err := x.writeBody(c.ep, w.a, w.img); err != nil {
			return err
		}
	}
	var ptr [8]byte
	binary.LittleEndian.PutUint64(ptr[:], uint64(ra))
	if err := c.ep.Write(x.rootPtr, ptr[:]); err != nil {
		return err
	}
	rf.mu.Lock()
	l.setChild(rf.data, 0, swizzled|uint64(f.id))
	l.setChild(rf.data, 1, swizzled|uint64(nf.id))
	rf.mu.Unlock()
	for _, g := range []struct {
		f *frame
		a transport.GAddr
	}{{nf, na}, {rf, ra}} {
		g.f.addr.Store(uint64(g.a))
		g.f.dirty.Store(false)
		g.f.state.Store(stateHot)
		cn.mt.set(g.a, g.f)
	}
	f.dirty.Store(false)
	f.parent.Store(rf)
	nf.parent.Store(rf)
	rf.parent.Store(nil)
	cn.root.Store(rf)
	return errRestart
}

// refreshSplit walks the shared part of key's path from the remote root
// under RDMA locks, splitting every full shared node on the way (section
// 7), then refreshes the cached copies.
func (c *client) refreshSplit(key []byte) error {
	x, l := c.x, &c.x.l
	parts := x.parts.Load()
	for {
		again, err := c.splitSharedPath(parts, key, l)
		if err != nil {
			return err
		}
		if !again {
			break
		}
	}
	if err := c.refresh(key); err != errRestart {
		return err
	}
	return errRestart
}

// splitSharedPath performs at most one split on the shared path of key
// and reports whether it did (the caller walks again). It couples locks
// from the remote root down, splitting the first full node under its
// locked parent. With the cache it stops at the first owned node, which
// splits in the cache; without it (splitPathDirect) it walks down to the
// leaf, owned nodes under their latches.
func (c *client) splitSharedPath(parts *partitions, key []byte, l *layout) (bool, error) {
	x, ep := c.x, c.ep
	ra, err := x.readRoot(ep)
	if err != nil {
		return false, err
	}
	// The root spans every key: shared unless one compute node owns all.
	zero := make([]byte, l.ks)
	hr, err := c.lockNode(ra, x.opt.cached || x.sharedRange(parts, zero, nil))
	if err != nil {
		return false, err
	}
	cur := make(node, NodeBytes)
	if err := ep.Read(cur, ra); err != nil {
		return false, err
	}
	if now, err := x.readRoot(ep); err != nil || now != ra {
		if rerr := c.unlockNode(hr, nil); rerr != nil {
			return false, rerr
		}
		return true, err
	}
	if l.full(cur) {
		return true, c.splitRemoteRoot(hr, cur)
	}
	hc := hr
	for cur.level() > 0 {
		i := l.innerFind(cur, key)
		low, high := l.childRange(cur, i)
		shared := x.sharedRange(parts, low, high)
		if !shared && x.opt.cached {
			break
		}
		cha := transport.GAddr(l.child(cur, i))
		hch, err := c.lockNode(cha, shared)
		if err != nil {
			return false, err
		}
		ch := make(node, NodeBytes)
		if err := ep.Read(ch, cha); err != nil {
			return false, err
		}
		if l.full(ch) {
			sib := make(node, NodeBytes)
			sep := l.splitInto(ch, sib)
			sa, err := x.alloc(ep, x.placement(ch.level(), cha.Node()))
			if err != nil {
				return false, err
			}
			sib.setSelf(uint64(sa))
			if err := ep.Write(sa, sib); err != nil {
				return false, err
			}
			if err := c.unlockNode(hch, ch); err != nil {
				return false, err
			}
			l.innerInsertAt(cur, i+1, sep, uint64(sa))
			return true, c.unlockNode(hc, cur)
		}
		if err := c.unlockNode(hc, nil); err != nil {
			return false, err
		}
		hc, cur = hch, ch
	}
	return false, c.unlockNode(hc, nil)
}

// splitRemoteRoot splits the locked full root held by h.
func (c *client) splitRemoteRoot(h held, cur node) error {
	x, l, ep := c.x, &c.x.l, c.ep
	ra := h.a
	lv := cur.level()
	sa, err := x.alloc(ep, x.placement(lv, ra.Node()))
	if err != nil {
		return err
	}
	na, err := x.alloc(ep, x.placement(lv+1, ra.Node()))
	if err != nil {
		return err
	}
	sib := make(node, NodeBytes)
	sep := l.splitInto(cur, sib)
	sib.setSelf(uint64(sa))
	root := make(node, NodeBytes)
	root.setLevel(lv + 1)
	root.setSelf(uint64(na))
	low := bytes.Clone(l.low(cur))
	l.setFences(root, low, nil)
	l.innerInsertAt(root, 0, low, uint64(ra))
	l.innerInsertAt(root, 1, sep, uint64(sa))
	if err := ep.Write(sa, sib); err != nil {
		return err
	}
	if err := ep.Write(na, root); err != nil {
		return err
	}
	var ptr [8]byte
	binary.LittleEndian.PutUint64(ptr[:], uint64(na))
	if err := ep.Write(x.rootPtr, ptr[:]); err != nil {
		return err
	}
	return c.unlockNode(h, cur)
}

// refresh brings the cached shared nodes on key's path up to date from
// the remote root (section 4, Algorithm 1 line 40): each is re-read and
// its image replaced in place, keeping the swizzled pointers to children
// it still has. It always asks the caller to restart.
func (c *client) refresh(key []byte) error {
	x, l, cn := c.x, &c.x.l, c.cn
	parts := x.parts.Load()
	ra, err := x.readRoot(c.ep)
	if err != nil {
		return err
	}
	f := cn.root.Load()
	if f == nil || transport.GAddr(f.addr.Load()) != ra {
		if f, err = c.installRoot(); err != nil {
			return err
		}
	}
	fresh := make(node, NodeBytes)
	for f != nil {
		f.mu.RLock()
		shared := parts.shared(l.low(f.data), l.highKey(f.data))
		leaf := f.data.level() == 0
		f.mu.RUnlock()
		if !shared || leaf {
			break
		}
		a := transport.GAddr(f.addr.Load())
		if err := x.readNode(c.ep, a, true, fresh); err != nil {
			return err
		}
		f = c.install(f, a, fresh, key)
	}
	return errRestart
}

// install replaces the cached image of the shared node a in frame f with
// fresh unless the cached copy is as new, and returns the cached child on
// key's path (nil when there is none). A thread of this compute node may
// have changed the node (the remote copy first, then the cached one)
// since fresh was read: the older image would erase that change from the
// cache for good once the node's narrowed fences make it owned, as owned
// nodes are never refreshed, and keys would be routed to a leaf that does
// not cover them forever.
func (c *client) install(f *frame, a transport.GAddr, fresh node, key []byte) *frame {
	l, cn := &c.x.l, c.cn
	f.lockAny(c.ep)
	defer f.unlock()
	if transport.GAddr(f.addr.Load()) != a {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if fresh.lockWord() > f.rver.Load() {
		c.replaceImage(f, fresh)
	}
	next := l.child(f.data, l.innerFind(f.data, key))
	if next&swizzled == 0 {
		return nil
	}
	return cn.frames[next&^swizzled]
}

// replaceImage copies fresh into the locked inner frame f, keeping the
// swizzled pointers to the children fresh still has.
func (c *client) replaceImage(f *frame, fresh node) {
	l, cn := &c.x.l, c.cn
	keep := map[uint64]uint64{}
	for i := range f.data.count() {
		if p := l.child(f.data, i); p&swizzled != 0 {
			keep[cn.frames[p&^swizzled].addr.Load()] = p
		}
	}
	copy(f.data, fresh)
	for i := range f.data.count() {
		if p, ok := keep[l.child(f.data, i)]; ok {
			l.setChild(f.data, i, p)
		}
	}
	f.rver.Store(fresh.lockWord())
}
