package dex

import (
	"sync"
	"sync/atomic"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// Frame states.
const (
	stateFree uint32 = iota
	stateHot
	stateCooling
)

// frame is one page of the compute-side cache (section 5.1): a node image
// plus the optimistic lock that synchronises the node's threads.
type frame struct {
	id int32
	// ver is the optimistic lock (section 5.1, lock coupling of [18]):
	// odd while a writer holds the frame. Readers read it, read the
	// image, and validate it unchanged.
	ver atomic.Uint64
	// wl is held by the writer, across verbs; lockAny queues on it.
	wl transport.Mutex
	// line is the cache line of the lock word, which every attempt to
	// take the lock moves to its core.
	line transport.Line
	// mu makes the image accesses well-defined for Go's memory model; it
	// is held only around copies, never across a verb.
	mu     sync.RWMutex
	data   node
	addr   atomic.Uint64 // global address of the cached node
	state  atomic.Uint32
	dirty  atomic.Bool
	gen    atomic.Uint64 // bumped when the frame is evicted or re-heated
	pins   atomic.Int32  // offloads under way below this node (section 6.2)
	parent atomic.Pointer[frame]
	rver   atomic.Uint64 // lock word of the remote copy when fetched
}

// lock takes the frame's write lock if its version is still v: the
// OptLock's writeLockOrRestart (include/cache/btree_node.h), one
// compare-and-swap of the version word that fails at once when another
// thread holds the lock or has changed the node since v; the caller then
// restarts its operation after a back-off. Every attempt, failed or not,
// moves the lock word's line, so crowded attempts serialise on it.
func (f *frame) lock(ep transport.Endpoint, v uint64) bool {
	f.line.Touch(ep)
	if f.ver.Load() != v || !f.wl.TryLock() {
		return false
	}
	if f.ver.Load() != v { // changed between the check and the lock
		f.wl.Unlock()
		return false
	}
	f.ver.Add(1)
	return true
}

// lockAny takes the write lock whatever the version, waiting for it.
func (f *frame) lockAny(ep transport.Endpoint) {
	f.wl.Lock(ep)
	f.line.Touch(ep)
	f.ver.Add(1)
}

// tryLock takes the write lock if it is free (eviction never waits).
func (f *frame) tryLock() bool {
	if !f.wl.TryLock() {
		return false
	}
	f.ver.Add(1)
	return true
}

func (f *frame) unlock() {
	f.ver.Add(1)
	f.wl.Unlock()
}

// stable reads the version for an optimistic read; false while locked.
func (f *frame) stable() (uint64, bool) {
	v := f.ver.Load()
	return v, v&1 == 0
}

// mtEntry is a mapping-table value: a frame, or the I/O flag of a thread
// fetching (or offloading below) the node (section 5.4, 6.2).
type mtEntry struct {
	f  *frame
	io bool
}

const mtShards = 256

// mappingTable maps node addresses to frames (section 5.1), sharded so
// that threads rarely meet on one lock.
type mappingTable struct {
	shards [mtShards]struct {
		mu sync.Mutex // never held across a verb
		m  map[transport.GAddr]mtEntry
	}
}

func (t *mappingTable) init() {
	for i := range t.shards {
		t.shards[i].m = map[transport.GAddr]mtEntry{}
	}
}

func shardOf(a transport.GAddr) int { return int((uint64(a) >> 10) * 0x9e3779b97f4a7c15 >> 56) }

// get probes the table; the probe costs a large-hash-table lookup.
func (t *mappingTable) get(ep transport.Endpoint, a transport.GAddr) (mtEntry, bool) {
	ep.Compute(cost.CacheLookup())
	s := &t.shards[shardOf(a)]
	s.mu.Lock()
	e, ok := s.m[a]
	s.mu.Unlock()
	return e, ok
}

// claim sets the I/O flag of an absent node; false when present.
func (t *mappingTable) claim(a transport.GAddr) bool {
	s := &t.shards[shardOf(a)]
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[a]; ok {
		return false
	}
	s.m[a] = mtEntry{io: true}
	return true
}

// set maps a to f (replacing an I/O flag).
func (t *mappingTable) set(a transport.GAddr, f *frame) {
	s := &t.shards[shardOf(a)]
	s.mu.Lock()
	s.m[a] = mtEntry{f: f}
	s.mu.Unlock()
}

// release drops an I/O flag.
func (t *mappingTable) release(a transport.GAddr) {
	s := &t.shards[shardOf(a)]
	s.mu.Lock()
	if e, ok := s.m[a]; ok && e.io {
		delete(s.m, a)
	}
	s.mu.Unlock()
}

// drop removes a's mapping if it is f.
func (t *mappingTable) drop(a transport.GAddr, f *frame) {
	s := &t.shards[shardOf(a)]
	s.mu.Lock()
	if e, ok := s.m[a]; ok && e.f == f {
		delete(s.m, a)
	}
	s.mu.Unlock()
}

func (t *mappingTable) clear() {
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		s.m = map[transport.GAddr]mtEntry{}
		s.mu.Unlock()
	}
}
