package marlin

import (
	"bytes"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/google/btree"

	"github.com/dmbench/dmbench/internal/keyorder"

	"github.com/dmbench/dmbench/transport"
)

// The index cache is Sherman's scheme, which Marlin keeps unchanged: each
// compute node caches copies of internal nodes (never leaves) ordered by
// low fence per level, so one lookup finds the level-1 node covering a
// key and with it the leaf's address. A copy is immutable; a fresher copy
// replaces it, and a traversal that finds a copy stale drops it. When the
// budget is full an entry is evicted by the power of two random choices
// on access counts (Sherman's evict_one).

// cachedNode is an immutable copy of an internal node.
type cachedNode struct {
	addr  transport.GAddr
	level int
	image []byte
	low   string // the low fence, the ordering key
	freq  atomic.Uint64
	pos   int // index in nodeCache.all; guarded by nodeCache.mu
}

// nodeCache is one compute node's index cache, shared by its clients.
// Its mutex is never held across a verb.
type nodeCache struct {
	l        *layout
	capacity int // nodes

	mu     sync.RWMutex
	levels []*btree.BTreeG[ordered] // by level-1
	all    []*cachedNode

	hits, lookups atomic.Uint64
}

func newNodeCache(l *layout, budget uint64) *nodeCache {
	return &nodeCache{l: l, capacity: int(budget / uint64(l.innerBytes))}
}

// ordered is a cached node's place in its level: its low fence's prefix,
// compared as integers, then the whole fence.
type ordered = keyorder.Item[*cachedNode]

func (n *cachedNode) ordered() ordered { return ordered{P: keyorder.Of([]byte(n.low)), V: n} }

var lessLow = keyorder.Less(func(n *cachedNode) string { return n.low })

// lookup returns the cached node of level lvl whose range covers key.
func (nc *nodeCache) lookup(lvl int, key []byte) *cachedNode {
	nc.mu.RLock()
	defer nc.mu.RUnlock()
	if lvl < 1 || lvl > len(nc.levels) {
		return nil
	}
	var found *cachedNode
	probe := ordered{P: keyorder.Of(key), V: &cachedNode{low: string(key)}}
	nc.levels[lvl-1].DescendLessOrEqual(probe, func(o ordered) bool {
		found = o.V
		return false
	})
	if found == nil || !nc.l.covers(found.image, key) {
		return nil
	}
	found.freq.Add(1)
	return found
}

// insert caches a copy of the internal node image at addr, replacing an
// older copy, and evicts to stay within the budget.
func (nc *nodeCache) insert(addr transport.GAddr, image []byte, rng *rand.Rand) {
	if nc.capacity == 0 {
		return
	}
	n := &cachedNode{addr: addr, level: level(image), image: bytes.Clone(image), low: string(nc.l.low(image))}
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
func (nc *nodeCache) invalidate(n *cachedNode) {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	if n.pos < len(nc.all) && nc.all[n.pos] == n {
		nc.removeLocked(n)
	}
}

func (nc *nodeCache) removeLocked(n *cachedNode) {
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
	return uint64(len(nc.all)) * uint64(nc.l.innerBytes)
}
