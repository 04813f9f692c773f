package transport

import (
	"sync"

	"github.com/dmbench/dmbench/cost"
)

// Line is one contended cache line of a compute node: a shared counter, a
// queue's tail, a ticket word. Cores get it one at a time, so the atomic
// operations of many cores on one line serialise however few instructions
// each is. A touch from a core other than the line's last holder waits
// until the line is free, then moves it (cost.CachelineTransfer) with the
// core stalled meanwhile; a touch from the core that holds it is free.
// The cost is charged as Compute, so only the simulator sees it.
// The zero value is a line no core holds.
type Line struct {
	mu    sync.Mutex
	owner core
	held  bool
	free  int64 // ns: when the last transfer completes
}

// Touch is one access of ep's core to the line: an atomic increment, a
// store, the read of a word another core wrote.
func (l *Line) Touch(ep Endpoint) {
	c := coreOf(ep)
	now := ep.Now()
	l.mu.Lock()
	if l.held && l.owner == c {
		l.mu.Unlock()
		return
	}
	end := max(now, l.free) + cost.CachelineTransfer()
	l.owner, l.held, l.free = c, true, end
	l.mu.Unlock()
	ep.Compute(end - now)
}

// CopyTo makes dst the line that touches by compute node n's cores would
// have left, where l is what the same touches by another compute node's
// cores left: held by the same thread, of n, and free at the same time.
// An index that gives one compute node what another learned
// (indexes.CacheCopier) copies the node's lines so: a plain copy would
// leave the line held by a core of the other node, and the first touch
// by the holding thread of n would pay a transfer it would not have paid.
func (l *Line) CopyTo(dst *Line, n NodeID) {
	l.mu.Lock()
	owner, held, free := l.owner, l.held, l.free
	l.mu.Unlock()
	if held {
		owner.node = n
	}
	dst.mu.Lock()
	dst.owner, dst.held, dst.free = owner, held, free
	dst.mu.Unlock()
}
