package dex

import (
	"bytes"

	"github.com/dmbench/dmbench/transport"
)

// mergeLeaf merges the leaf covering key into its left neighbour, or its
// right neighbour into it, when both are cached under the owned parent p
// and fit in three quarters of a leaf (section 7, delete). A shared
// parent is left alone: merging is optional and the shared path is
// refreshed only for splits.
func (c *client) mergeLeaf(p *frame, key []byte) error {
	x, l, cn := c.x, &c.x.l, c.cn
	pv, ok := p.stable()
	if !ok {
		return errRestart
	}
	p.mu.RLock()
	if p.data.level() != 1 || x.parts.Load().shared(l.low(p.data), l.highKey(p.data)) {
		p.mu.RUnlock()
		return nil
	}
	i := l.innerFind(p.data, key)
	if i+1 >= p.data.count() {
		i--
	}
	if i < 0 {
		p.mu.RUnlock()
		return nil
	}
	lp, rp := l.child(p.data, i), l.child(p.data, i+1)
	p.mu.RUnlock()
	if lp&swizzled == 0 || rp&swizzled == 0 {
		return nil
	}
	left, right := cn.frames[lp&^swizzled], cn.frames[rp&^swizzled]
	if !p.lock(c.ep, pv) {
		return errRestart
	}
	defer p.unlock()
	left.lockAny(c.ep)
	defer left.unlock()
	right.lockAny(c.ep)
	defer right.unlock()
	if l.child(p.data, i) != lp || l.child(p.data, i+1) != rp ||
		left.data.count()+right.data.count() > l.leafCap*3/4 || right.pins.Load() > 0 {
		return nil
	}
	left.mu.Lock()
	n := left.data.count()
	copy(left.data[l.hdr+n*l.leafEnt:], right.data[l.hdr:l.hdr+right.data.count()*l.leafEnt])
	left.data.setCount(n + right.data.count())
	l.setFences(left.data, bytes.Clone(l.low(left.data)), bytes.Clone(l.highKey(right.data)))
	left.mu.Unlock()
	p.mu.Lock()
	l.innerRemoveAt(p.data, i+1)
	p.mu.Unlock()
	left.dirty.Store(true)
	p.dirty.Store(true)
	cn.mt.drop(transportAddr(right), right)
	c.release(right)
	c.putFree(right)
	return nil
}

func transportAddr(f *frame) transport.GAddr { return transport.GAddr(f.addr.Load()) }
