package fpbtree

import (
	"bytes"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/dmbench/dmbench/internal/keyorder"
)

// nodeCache is one compute node's private cache of bottom-level internal
// nodes (DMTree section 3.2.1: only the bottom level is cached; the levels
// above are rebuilt locally, here as runs ordered by each node's low
// fence). Eviction is FIFO under the byte budget. The mutex guards only
// local state and is never held across a verb.
type nodeCache struct {
	mu      sync.RWMutex
	byLow   keyorder.Runs[*inode]
	fifo    []*inode
	bytes   uint64
	budget  uint64
	perNode uint64

	hits, lookups atomic.Uint64
}

func newNodeCache(budget uint64, nodeSize int) *nodeCache {
	return &nodeCache{budget: budget, perNode: uint64(nodeSize)}
}

// byLow compares a cached node's low fence with k, when their prefixes
// tie.
func byLow(k *ikey) keyorder.Tie[*inode] {
	return func(n *inode) int { return bytes.Compare(n.low.b, k.b) }
}

// lookup returns the cached bottom-level node covering key k.
func (c *nodeCache) lookup(k *ikey) (*inode, bool) {
	c.lookups.Add(1)
	c.mu.RLock()
	defer c.mu.RUnlock()
	p, ok := c.byLow.Floor(keyorder.Key{P: k.p}, byLow(k))
	if !ok {
		return nil, false
	}
	// The node starts at or before key; it covers key unless key reaches
	// its high fence.
	n := c.byLow.At(p)
	if !n.inf() && n.high.cmp(k) <= 0 {
		return nil, false
	}
	c.hits.Add(1)
	return n, true
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
	for {
		p, ok := c.byLow.Ceil(keyorder.Key{P: n.low.p}, byLow(&n.low))
		if !ok || !n.inf() && c.byLow.At(p).low.cmp(&n.high) >= 0 {
			break
		}
		c.byLow.Delete(p)
		c.bytes -= c.perNode
	}
	c.byLow.Put(keyorder.Key{P: n.low.p}, n, byLow(&n.low))
	c.bytes += c.perNode
	c.fifo = append(c.fifo, n)
	for c.bytes > c.budget && len(c.fifo) > 0 {
		old := c.fifo[0]
		c.fifo[0] = nil
		c.fifo = c.fifo[1:]
		if p, ok := c.byLow.Floor(keyorder.Key{P: old.low.p}, byLow(&old.low)); ok && c.byLow.At(p) == old {
			c.byLow.Delete(p)
			c.bytes -= c.perNode
		}
	}
	if cap(c.fifo) > 4*len(c.fifo)+64 {
		c.fifo = append([]*inode(nil), c.fifo...)
	}
}

// clone is a copy of c for another compute node: the same nodes in the
// same runs and FIFO order, the same budget and counters. The nodes are
// shared: a cached node never changes after put (every writer changes a
// node it read afresh and puts that).
func (c *nodeCache) clone() *nodeCache {
	c.mu.RLock()
	defer c.mu.RUnlock()
	d := &nodeCache{byLow: c.byLow.Clone(), fifo: slices.Clone(c.fifo), bytes: c.bytes, budget: c.budget, perNode: c.perNode}
	d.hits.Store(c.hits.Load())
	d.lookups.Store(c.lookups.Load())
	return d
}

// size is the cache's footprint in bytes.
func (c *nodeCache) size() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.bytes
}
