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
	byLow   runs
	fifo    []*inode
	bytes   uint64
	budget  uint64
	perNode uint64

	hits, lookups atomic.Uint64
}

func newNodeCache(budget uint64, nodeSize int) *nodeCache {
	return &nodeCache{budget: budget, perNode: uint64(nodeSize)}
}

// lookup returns the cached bottom-level node covering key k.
func (c *nodeCache) lookup(k *ikey) (*inode, bool) {
	c.lookups.Add(1)
	c.mu.RLock()
	defer c.mu.RUnlock()
	r, i := c.byLow.floor(k)
	if r < 0 {
		return nil, false
	}
	// The node starts at or before key; it covers key unless key reaches
	// its high fence.
	n := c.byLow.nodes[r][i].n
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
		r, i := c.byLow.ceil(&n.low)
		if r == len(c.byLow.nodes) || !n.inf() && c.byLow.nodes[r][i].cmp(&n.high) >= 0 {
			break
		}
		c.byLow.remove(r, i)
		c.bytes -= c.perNode
	}
	c.byLow.insert(n)
	c.bytes += c.perNode
	c.fifo = append(c.fifo, n)
	for c.bytes > c.budget && len(c.fifo) > 0 {
		old := c.fifo[0]
		c.fifo[0] = nil
		c.fifo = c.fifo[1:]
		if r, i := c.byLow.floor(&old.low); r >= 0 && c.byLow.nodes[r][i].n == old {
			c.byLow.remove(r, i)
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

// maxRun is the most nodes a run holds before it splits: long enough that
// the directory stays small, short enough that an insertion moves little.
const maxRun = 64

// runs orders nodes of distinct low fences: sorted runs, each non-empty,
// and the first node of each run in a directory. Every lookup searches
// the directory and then one run: two binary searches over contiguous
// prefixes compared in line, where a general B-tree calls a less
// function per comparison and walks an iterator (a lookup was a tenth of
// DMTree's CPU time).
type runs struct {
	firsts []cached   // firsts[r] is nodes[r][0]
	nodes  [][]cached // each run ordered by low fence
}

// cached is a node with its low fence's prefix, which orders it without
// a visit to the node unless the prefixes tie.
type cached struct {
	p keyorder.Prefix
	n *inode
}

// cmp orders e's low fence against k as bytes.Compare orders keys.
func (e *cached) cmp(k *ikey) int {
	if c := e.p.Compare(k.p); c != 0 {
		return c
	}
	return bytes.Compare(e.n.low.b, k.b)
}

// atMost is e.cmp(k) <= 0, decided by the first prefix words when they
// differ, as they do between hashed keys.
func (e *cached) atMost(k *ikey) bool {
	if e.p[0] != k.p[0] {
		return e.p[0] < k.p[0]
	}
	return e.cmp(k) <= 0
}

// floor is the position of the last node whose low fence is at most k:
// run r (-1 when k precedes every node) and index i within it.
func (x *runs) floor(k *ikey) (r, i int) {
	lo, hi := 0, len(x.firsts)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if x.firsts[m].atMost(k) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	r = lo - 1
	if r < 0 {
		return -1, 0
	}
	run := x.nodes[r]
	lo, hi = 1, len(run)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if run[m].atMost(k) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return r, lo - 1
}

// ceil is the position of the first node whose low fence is at least k;
// r is len(x.nodes) when there is none.
func (x *runs) ceil(k *ikey) (r, i int) {
	r, i = x.floor(k)
	switch {
	case r < 0:
		return 0, 0
	case x.nodes[r][i].cmp(k) == 0:
		return r, i
	case i+1 < len(x.nodes[r]):
		return r, i + 1
	default:
		return r + 1, 0
	}
}

// insert adds n, replacing the node of the same low fence if there is one.
func (x *runs) insert(n *inode) {
	e := cached{p: n.low.p, n: n}
	r, i := x.floor(&n.low)
	switch {
	case r >= 0 && x.nodes[r][i].cmp(&n.low) == 0:
		x.nodes[r][i] = e
		if i == 0 {
			x.firsts[r] = e
		}
		return
	case len(x.nodes) == 0:
		x.firsts = append(x.firsts, e)
		x.nodes = append(x.nodes, []cached{e})
		return
	case r < 0:
		r, i = 0, 0
		x.firsts[0] = e
	default:
		i++
	}
	x.nodes[r] = slices.Insert(x.nodes[r], i, e)
	if run := x.nodes[r]; len(run) > maxRun {
		right := slices.Clone(run[len(run)/2:])
		x.nodes[r] = slices.Delete(run, len(run)/2, len(run))
		x.nodes = slices.Insert(x.nodes, r+1, right)
		x.firsts = slices.Insert(x.firsts, r+1, right[0])
	}
}

// remove deletes the node at run r, index i, and the run if it empties.
func (x *runs) remove(r, i int) {
	x.nodes[r] = slices.Delete(x.nodes[r], i, i+1)
	switch {
	case len(x.nodes[r]) == 0:
		x.nodes = slices.Delete(x.nodes, r, r+1)
		x.firsts = slices.Delete(x.firsts, r, r+1)
	case i == 0:
		x.firsts[r] = x.nodes[r][0]
	}
}
