package inner

import (
	"bytes"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/google/btree"

	"github.com/dmbench/dmbench/internal/keyorder"

	"github.com/dmbench/dmbench/transport"
)

// The index cache, Sherman's, which Marlin keeps unchanged: each compute
// node caches copies of internal nodes, never leaves, in a structure
// ordered by key range so that one lookup finds the node of a level
// covering a key (Sherman uses a skiplist of [lowest, highest) ranges of
// its level-1 nodes; the DEX and Dolphin papers describe the upper levels
// as cached too). A cached node is never updated in place: a writer that
// rewrote a node, or a reader that fetched a fresh copy, replaces it; a
// traversal that finds a cached node stale (a child's fences do not cover
// the key) invalidates it and re-traverses from the root. When the budget
// is full an entry is evicted by the power of two random choices on
// access counts, as Sherman's evict_one does.

// CachedNode is an immutable copy of an internal node.
type CachedNode struct {
	Addr  transport.GAddr
	level int
	Image []byte // the node as read or written
	// low is the node's low fence, kept apart from the image so that
	// ordering the cache compares strings without slicing images.
	low  string
	freq atomic.Uint64
	pos  int // index in nodeCache.all; guarded by nodeCache.mu
}

// nodeCache is one compute node's index cache, shared by its clients. Its
// mutex is never held across a verb.
type nodeCache struct {
	l        *Layout
	capacity int // nodes

	mu     sync.RWMutex
	levels []*btree.BTreeG[ordered] // by level-1, ordered by low fence
	all    []*CachedNode

	hits, lookups atomic.Uint64
}

func newNodeCache(l *Layout, budget uint64) *nodeCache {
	return &nodeCache{l: l, capacity: int(budget / uint64(l.InnerBytes))}
}

// ordered is a cached node's place in its level: its low fence's prefix,
// compared as integers, then the whole fence.
type ordered = keyorder.Item[*CachedNode]

func (n *CachedNode) ordered() ordered { return ordered{P: keyorder.Of([]byte(n.low)), V: n} }

var lessLow = keyorder.Less(func(n *CachedNode) string { return n.low })

// lookup returns the cached node of level lvl whose range covers key.
// probe is the caller's own scratch node.
func (nc *nodeCache) lookup(lvl int, key []byte, probe *CachedNode) *CachedNode {
	nc.mu.RLock()
	defer nc.mu.RUnlock()
	if lvl < 1 || lvl > len(nc.levels) {
		return nil
	}
	// The probe borrows key's bytes for the call only, so a lookup
	// allocates nothing; it is cleared before key may change.
	probe.low = unsafe.String(unsafe.SliceData(key), len(key))
	defer func() { probe.low = "" }()
	var found *CachedNode
	nc.levels[lvl-1].DescendLessOrEqual(ordered{P: keyorder.Of(key), V: probe}, func(o ordered) bool {
		found = o.V
		return false
	})
	if found == nil || !nc.l.Covers(found.Image, key) {
		return nil
	}
	found.freq.Add(1)
	return found
}

// insert caches a copy of the internal node image at addr, replacing any
// older copy of it, and evicts to stay within the budget.
func (nc *nodeCache) insert(addr transport.GAddr, image []byte, rng *rand.Rand) {
	if nc.capacity == 0 {
		return
	}
	n := &CachedNode{Addr: addr, level: Level(image), Image: bytes.Clone(image), low: string(nc.l.Low(image))}
	nc.mu.Lock()
	defer nc.mu.Unlock()
	for len(nc.levels) < n.level {
		nc.levels = append(nc.levels, btree.NewG(16, lessLow))
	}
	if prev, had := nc.levels[n.level-1].ReplaceOrInsert(n.ordered()); had {
		old := prev.V
		n.pos = old.pos
		n.freq.Store(old.freq.Load())
		nc.all[n.pos] = n
		return
	}
	n.pos = len(nc.all)
	nc.all = append(nc.all, n)
	for len(nc.all) > nc.capacity {
		a, b := nc.all[rng.IntN(len(nc.all))], nc.all[rng.IntN(len(nc.all))]
		if b.freq.Load() < a.freq.Load() {
			a = b
		}
		nc.removeLocked(a)
	}
}

// invalidate drops n if it is still the cached copy of its node.
func (nc *nodeCache) invalidate(n *CachedNode) {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	if n.pos < len(nc.all) && nc.all[n.pos] == n {
		nc.removeLocked(n)
	}
}

func (nc *nodeCache) removeLocked(n *CachedNode) {
	nc.levels[n.level-1].Delete(n.ordered())
	last := nc.all[len(nc.all)-1]
	nc.all[n.pos] = last
	last.pos = n.pos
	nc.all = nc.all[:len(nc.all)-1]
}

// bytes is the memory the cached nodes take.
func (nc *nodeCache) bytes() uint64 {
	nc.mu.RLock()
	defer nc.mu.RUnlock()
	return uint64(len(nc.all)) * uint64(nc.l.InnerBytes)
}
