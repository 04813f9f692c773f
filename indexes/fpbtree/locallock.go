package fpbtree

import (
	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// The local lock table of write combining (DMTree section 4.1, which
// follows SMART [32] and Sherman [49]; section 3.3 names Sherman's local
// lock tables as what DMTree's compute-side locking builds on). Each
// compute node keeps one local lock per leaf lock word its writers are
// after. A writer takes the local lock before it CASes the word, so the
// writers of one node queue locally instead of all spinning on the word:
// on a hot leaf a CAS storm would fill the word's atomic unit and delay
// the successful CAS by the whole queue. A holder that sees a local waiter
// hands the word over with the local lock instead of releasing it
// remotely, at most maxHandOver times in a row so that other compute nodes
// get their turn; an update handed over saves its unlock WRITE, an insert
// writes its table with the lock word still set. Without Options.Combine
// (the basic FP-B+-tree) writers CAS the word directly.

// maxHandOver bounds consecutive local hand-overs of one lock word
// (Sherman's kMaxHandOverTime).
const maxHandOver = 8

// localLock is one compute node's lock for one leaf lock word.
type localLock struct {
	// mu is the local lock itself, held across verbs: a ticket lock, as
	// in DMTree's LocalLockTable.h (acquire_local_lock: write_ticket and
	// write_current; waiters yield their coroutine).
	mu transport.Mutex
	// queued counts writers holding mu or waiting for it; guarded by
	// nodeState.mu.
	queued int
	// Guarded by mu: whether this compute node holds the lock word (it
	// passes with mu on a hand-over) and how many hand-overs in a row it
	// has had.
	global   bool
	handOver int
}

// lockLocal queues the caller for a's local lock and takes it; global
// reports whether the lock word came with it.
func (c *Client) lockLocal(a transport.GAddr) (s *localLock, global bool) {
	ns := c.ns
	ns.mu.Lock()
	s = ns.locks[a]
	if s == nil {
		s = &localLock{mu: transport.Mutex{Kind: transport.LockTicket}}
		ns.locks[a] = s
	}
	s.queued++
	ns.mu.Unlock()
	c.ep.Compute(cost.CachelineTransfer()) // the queue count's shared line
	s.mu.Lock(c.ep)
	return s, s.global
}

// keepGlobal reports whether the holder of a's local lock hands the lock
// word over to a local waiter rather than releasing it remotely. Waiters
// never leave the queue, so a true answer stays true until the release.
func (c *Client) keepGlobal(a transport.GAddr) bool {
	if !c.t.opts.Combine {
		return false
	}
	ns := c.ns
	ns.mu.Lock()
	s := ns.locks[a]
	waiting := s.queued > 1
	ns.mu.Unlock()
	return waiting && s.handOver < maxHandOver
}

// unlockLocal releases a's local lock after the lock word was handed over
// (global) or released remotely.
func (c *Client) unlockLocal(a transport.GAddr, global bool) {
	if !c.t.opts.Combine {
		return
	}
	ns := c.ns
	ns.mu.Lock()
	s := ns.locks[a]
	s.queued--
	if s.queued == 0 {
		delete(ns.locks, a) // no one left to hand anything to
	}
	ns.mu.Unlock()
	s.global = global
	if global {
		s.handOver++
	} else {
		s.handOver = 0
	}
	s.mu.Unlock()
}
