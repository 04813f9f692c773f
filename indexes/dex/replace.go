package dex

import (
	"github.com/dmbench/dmbench/transport"
)

// Page replacement (sections 5.1-5.4): thread-local free pages, random
// sampling into the cooling map with path-aware delegation, eviction from
// the cooling map with write-back of dirty pages.

// samples is how many frames a thread samples for cooling when it has no
// free page (section 5.1: two).
const samples = 2

// getFrame returns a free frame, or nil when none can be freed now.
func (c *client) getFrame() *frame {
	cn := c.cn
	if f := c.popFree(); f != nil {
		return f
	}
	if f := cn.takeFreed(); f != nil {
		return f
	}
	if f := cn.fresh(); f != nil {
		return f
	}
	for range 8 {
		for range samples {
			if err := c.coolSample(); err != nil {
				return nil
			}
		}
		if f := c.popFree(); f != nil {
			return f
		}
		if s, ok := cn.cool.pop(c.ep); ok {
			if err := c.evict(s); err != nil {
				return nil
			}
		}
		if f := c.popFree(); f != nil {
			return f
		}
	}
	return nil
}

func (c *client) popFree() *frame {
	if n := len(c.free); n > 0 {
		f := c.free[n-1]
		c.free = c.free[:n-1]
		return f
	}
	return nil
}

// putFree returns an unused frame to this thread's free pages.
func (c *client) putFree(f *frame) { c.free = append(c.free, f) }

// swizzledChild returns a random swizzled child of an inner frame, nil
// when it has none.
func (c *client) swizzledChild(f *frame) *frame {
	l := &c.x.l
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.data.level() == 0 {
		return nil
	}
	n := f.data.count()
	if n == 0 {
		return nil
	}
	start := c.ep.Rand().IntN(n)
	for i := range n {
		if p := l.child(f.data, (start+i)%n); p&swizzled != 0 {
			return c.cn.frames[p&^swizzled]
		}
	}
	return nil
}

// coolSample samples a frame and moves it, or the end of the cached path
// below it (path-aware delegation, section 5.3), to the cooling state:
// unswizzled from its parent, written back if dirty, and pushed into the
// cooling map, whose overflow is evicted.
func (c *client) coolSample() error {
	cn := c.cn
	n := min(int(cn.used.Load()), len(cn.frames))
	if n == 0 {
		return nil
	}
	s := cn.frames[c.ep.Rand().IntN(n)]
	for range 64 {
		if s.state.Load() != stateHot {
			return nil
		}
		ch := c.swizzledChild(s)
		if ch == nil {
			break
		}
		s = ch
	}
	return c.coolFrame(s)
}

// coolFrame moves the hot frame s to the cooling state unless it is the
// root, pinned, or locked by another thread (cooling never waits).
func (c *client) coolFrame(s *frame) error {
	cn := c.cn
	if s == cn.root.Load() || s.pins.Load() > 0 || s.state.Load() != stateHot {
		return nil
	}
	p := s.parent.Load()
	if p != nil && !p.tryLock() {
		return nil
	}
	if !s.tryLock() {
		if p != nil {
			p.unlock()
		}
		return nil
	}
	err := c.cool(p, s)
	s.unlock()
	if p != nil {
		p.unlock()
	}
	if err != nil {
		return err
	}
	if s.state.Load() != stateCooling {
		return nil
	}
	if out, full := cn.cool.push(c.ep, s); full {
		return c.evict(out)
	}
	return nil
}

// cool does the cooling of s under the locks of s and its parent p.
func (c *client) cool(p, s *frame) error {
	l := &c.x.l
	if s.state.Load() != stateHot || s.pins.Load() > 0 || s.parent.Load() != p || c.swizzledChildLocked(s) {
		return nil
	}
	a := s.addr.Load()
	if p != nil {
		p.mu.Lock()
		if p.data.level() > 0 {
			s.mu.RLock()
			i := l.innerFind(p.data, l.low(s.data))
			s.mu.RUnlock()
			if i < p.data.count() && l.child(p.data, i) == swizzled|uint64(s.id) {
				l.setChild(p.data, i, a)
			}
		}
		p.mu.Unlock()
	}
	if s.dirty.Load() {
		s.mu.RLock()
		img := append(node(nil), s.data...)
		s.mu.RUnlock()
		if err := c.x.writeBody(c.ep, transport.GAddr(a), img); err != nil {
			return err
		}
		s.dirty.Store(false)
	}
	s.parent.Store(nil)
	s.state.Store(stateCooling)
	return nil
}

func (c *client) swizzledChildLocked(f *frame) bool {
	l := &c.x.l
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.data.level() == 0 {
		return false
	}
	for i := range f.data.count() {
		if l.child(f.data, i)&swizzled != 0 {
			return true
		}
	}
	return false
}

// evict frees the frame of a cooling-map slot if it is still cooling at
// the slot's generation.
func (c *client) evict(s coolingSlot) error {
	f := s.f
	if f == nil || f.gen.Load() != s.gen || f.state.Load() != stateCooling || f.pins.Load() > 0 {
		return nil
	}
	if !f.tryLock() {
		return nil
	}
	defer f.unlock()
	if f.gen.Load() != s.gen || f.state.Load() != stateCooling {
		return nil
	}
	a := transport.GAddr(f.addr.Load())
	if f.dirty.Load() {
		if err := c.x.writeBody(c.ep, a, f.data); err != nil {
			return err
		}
		f.dirty.Store(false)
	}
	c.cn.mt.drop(a, f)
	c.release(f)
	c.putFree(f)
	return nil
}

// release marks a locked frame free; stale references fail validation
// because its version and generation move.
func (c *client) release(f *frame) {
	f.state.Store(stateFree)
	f.gen.Add(1)
	f.addr.Store(0)
	f.parent.Store(nil)
}
