package dolphin

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/dmbench/dmbench/transport"
)

// artCache is one compute node's index cache: copies of ART internal nodes
// (never leaves, never full keys), shared by the node's clients and keyed
// by the node's remote address, so a traversal follows cached slots from
// the root down as long as the children are cached. A cached copy may be
// stale; the traversal detects it (a missing child, a leaf outside its
// range, an obsolete node) and reads the node again, which replaces the
// copy. Its mutex is never held across a verb.
//
// Budget: the bytes of the cached nodes (their remote size) stay within
// Env.CacheBytes. When a new copy would exceed it, entries are evicted by
// the power of two random choices on access counts (the less used of two
// random entries goes), as Sherman's cache does; SMART's RadixCache, which
// Dolphin reuses, also evicts a random victim. A budget of 0 caches nothing.
type artCache struct {
	budget uint64

	mu    sync.RWMutex
	used  uint64
	nodes map[transport.GAddr]*centry
	all   []*centry

	hits, lookups atomic.Uint64
}

type centry struct {
	n    *inode
	freq atomic.Uint64
	pos  int // index in all; guarded by artCache.mu
}

func newARTCache(budget uint64) *artCache {
	return &artCache{budget: budget, nodes: map[transport.GAddr]*centry{}}
}

// get returns the cached copy of the node at a, or nil.
func (c *artCache) get(a transport.GAddr) *inode {
	c.lookups.Add(1)
	c.mu.RLock()
	defer c.mu.RUnlock()
	e := c.nodes[a]
	if e == nil {
		return nil
	}
	c.hits.Add(1)
	e.freq.Add(1)
	return e.n
}

// put caches n, replacing an older copy, and evicts to stay in budget.
func (c *artCache) put(n *inode, rng *rand.Rand) {
	if n.obsolete() {
		c.drop(n.addr)
		return
	}
	if uint64(n.size) > c.budget {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.nodes[n.addr]; old != nil {
		c.used += uint64(n.size) - uint64(old.n.size)
		old.n = n
		return
	}
	e := &centry{n: n, pos: len(c.all)}
	c.nodes[n.addr] = e
	c.all = append(c.all, e)
	c.used += uint64(n.size)
	for c.used > c.budget && len(c.all) > 1 {
		a, b := c.all[rng.IntN(len(c.all))], c.all[rng.IntN(len(c.all))]
		if b.freq.Load() < a.freq.Load() {
			a = b
		}
		if a == e {
			continue
		}
		c.removeLocked(a)
	}
}

// drop forgets the node at a.
func (c *artCache) drop(a transport.GAddr) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.nodes[a]; e != nil {
		c.removeLocked(e)
	}
}

func (c *artCache) removeLocked(e *centry) {
	delete(c.nodes, e.n.addr)
	last := c.all[len(c.all)-1]
	c.all[e.pos] = last
	last.pos = e.pos
	c.all = c.all[:len(c.all)-1]
	c.used -= uint64(e.n.size)
}

func (c *artCache) bytes() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.used
}
