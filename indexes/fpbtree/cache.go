package fpbtree

import (
	"bytes"
	"sync"
	"sync/atomic"

	"github.com/google/btree"

	"github.com/dmbench/dmbench/internal/keyorder"
)

// nodeCache is one compute node's private cache of bottom-level internal
// nodes (DMTree section 3.2.1: only the bottom level is cached; the levels
// above are rebuilt locally, here as a B-tree ordered by each node's low
// fence). Eviction is FIFO under the byte budget. The mutex guards only
// local state and is never held across a verb.
type nodeCache struct {
	mu      sync.RWMutex
	byLow   *btree.BTreeG[cached]
	fifo    []*inode
	bytes   uint64
	budget  uint64
	perNode uint64

	hits, lookups atomic.Uint64
}

// cached is a node's place in the cache's order: its low fence, with the
// fence's prefix alongside so that ordering compares integers.
type cached struct {
	p   keyorder.Prefix
	low []byte
	n   *inode
}

func entryOf(n *inode) cached { return cached{p: keyorder.Of(n.low), low: n.low, n: n} }

func lessLow(a, b cached) bool { return keyorder.Compare(a.p, a.low, b.p, b.low) < 0 }

func newNodeCache(budget uint64, nodeSize int) *nodeCache {
	return &nodeCache{
		byLow:   btree.NewG(16, lessLow),
		budget:  budget,
		perNode: uint64(nodeSize),
	}
}

// lookup returns the cached bottom-level node covering key.
func (c *nodeCache) lookup(key []byte) (*inode, bool) {
	c.lookups.Add(1)
	c.mu.RLock()
	defer c.mu.RUnlock()
	var found *inode
	c.byLow.DescendLessOrEqual(cached{p: keyorder.Of(key), low: key}, func(o cached) bool {
		found = o.n
		return false
	})
	if found == nil || !contains(found.low, found.high, found.inf(), key) {
		return nil, false
	}
	c.hits.Add(1)
	return found, true
}

// put caches n, replacing every cached node whose low fence falls in n's
// range (older images of n and of nodes merged into its range), then
// evicts the oldest nodes past the budget.
func (c *nodeCache) put(n *inode) {
	if c.budget < c.perNode {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var stale []cached
	c.byLow.AscendGreaterOrEqual(entryOf(n), func(o cached) bool {
		if !n.inf() && bytes.Compare(o.low, n.high) >= 0 {
			return false
		}
		stale = append(stale, o)
		return true
	})
	for _, o := range stale {
		c.byLow.Delete(o)
		c.bytes -= c.perNode
	}
	c.byLow.ReplaceOrInsert(entryOf(n))
	c.bytes += c.perNode
	c.fifo = append(c.fifo, n)
	for c.bytes > c.budget && len(c.fifo) > 0 {
		old := c.fifo[0]
		c.fifo[0] = nil
		c.fifo = c.fifo[1:]
		if cur, ok := c.byLow.Get(entryOf(old)); ok && cur.n == old {
			c.byLow.Delete(cur)
			c.bytes -= c.perNode
		}
	}
	if cap(c.fifo) > 4*len(c.fifo)+64 {
		c.fifo = append([]*inode(nil), c.fifo...)
	}
}

// size is the cache's footprint in bytes.
func (c *nodeCache) size() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.bytes
}
