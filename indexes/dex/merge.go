package dex

import (
	"bytes"

	"github.com/dmbench/dmbench/transport"
)

// mergeLeaf merges the leaf covering key with a neighbour under the
// owned parent p (section 7, delete) and then, while a merge leaves an
// inner node under a quarter full, that node with a neighbour under its
// own owned parent, up to the children of the root. Shared parents are
// left alone: merging is optional, and the shared path is refreshed only
// for splits. The root is never collapsed (doc.go, Deviations).
func (c *client) mergeLeaf(p *frame, key []byte) error {
	l := &c.x.l
	for p != nil {
		merged, err := c.mergeChildren(p, key)
		if err != nil || !merged {
			return err
		}
		pv, ok := p.stable()
		if !ok {
			return nil
		}
		p.mu.RLock()
		low := p.data.count() < l.innerCap/4
		p.mu.RUnlock()
		next := p.parent.Load()
		if !low || p.ver.Load() != pv || p.state.Load() != stateHot {
			return nil
		}
		p = next
	}
	return nil
}

// mergeChildren merges the child of p covering key into its left
// neighbour, or its right neighbour into it, when both are cached under
// p, p is owned, and together they fill at most three quarters of a node.
// It reports whether it merged.
func (c *client) mergeChildren(p *frame, key []byte) (bool, error) {
	x, l, cn := c.x, &c.x.l, c.cn
	pv, ok := p.stable()
	if !ok {
		return false, errRestart
	}
	p.mu.RLock()
	if p.data.level() == 0 || x.parts.Load().shared(l.low(p.data), l.highKey(p.data)) {
		p.mu.RUnlock()
		return false, nil
	}
	i := l.innerFind(p.data, key)
	if i+1 >= p.data.count() {
		i--
	}
	if i < 0 {
		p.mu.RUnlock()
		return false, nil
	}
	lp, rp := l.child(p.data, i), l.child(p.data, i+1)
	p.mu.RUnlock()
	if lp&swizzled == 0 || rp&swizzled == 0 {
		return false, nil
	}
	left, right := cn.frames[lp&^swizzled], cn.frames[rp&^swizzled]
	if !p.lock(c.ep, pv) {
		return false, errRestart
	}
	defer p.unlock()
	left.lockAny(c.ep)
	defer left.unlock()
	right.lockAny(c.ep)
	defer right.unlock()
	if p.state.Load() != stateHot || l.child(p.data, i) != lp || l.child(p.data, i+1) != rp || right.pins.Load() > 0 {
		return false, nil
	}
	lv := left.data.level()
	ent := l.leafEnt
	if lv > 0 {
		ent = l.innerEnt
	}
	ln, rn := left.data.count(), right.data.count()
	if ln+rn > l.capacity(lv)*3/4 {
		return false, nil
	}
	// A repartitioning's moved range must keep its first leaf boundary.
	if fr := cn.frozen.Load(); fr != nil && fr.intersects(l.low(left.data), l.highKey(right.data)) {
		return false, nil
	}
	left.mu.Lock()
	copy(left.data[l.hdr+ln*ent:], right.data[l.hdr:l.hdr+rn*ent])
	left.data.setCount(ln + rn)
	l.setFences(left.data, bytes.Clone(l.low(left.data)), bytes.Clone(l.highKey(right.data)))
	left.mu.Unlock()
	if lv > 0 {
		for j := ln; j < ln+rn; j++ {
			if q := l.child(left.data, j); q&swizzled != 0 {
				cn.frames[q&^swizzled].parent.Store(left)
			}
		}
	}
	p.mu.Lock()
	l.innerRemoveAt(p.data, i+1)
	p.mu.Unlock()
	left.dirty.Store(true)
	p.dirty.Store(true)
	cn.mt.drop(transportAddr(right), right)
	c.release(right)
	c.putFree(right)
	return true, nil
}

func transportAddr(f *frame) transport.GAddr { return transport.GAddr(f.addr.Load()) }
