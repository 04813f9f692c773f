package dex

import (
	"sync"
	"sync/atomic"

	"github.com/dmbench/dmbench/transport"
)

// minFrames keeps a cache usable when the budget is tiny: the root path
// and the pages threads hold while they admit or split.
const minFrames = 64

// computeNode is the state one compute node shares among its threads:
// the cache (section 5) and the ownership lock of repartitioning.
type computeNode struct {
	x      *Index
	idx    int
	id     transport.NodeID
	frames []*frame
	used   atomic.Int64 // frames handed out at least once
	mt     mappingTable
	cool   *coolingMap
	root   atomic.Pointer[frame]
	rootMu transport.Mutex // serialises root installs and root splits
	// own is held shared by every operation and exclusively by a
	// repartitioning, which must see no operation in flight.
	own transport.RWMutex
	// epoch counts resets; clients drop their free pages when it moves.
	epoch atomic.Uint64
	hits  atomic.Uint64
	seen  atomic.Uint64
	// rootAddr and latches serve cache=false (direct.go): the root's
	// address, 0 until read, and the latches of this node's threads.
	rootAddr atomic.Uint64
	latches  latchTable
	// handlers keeps one client per RPC core endpoint for forwarded
	// operations, so their free pages survive between requests.
	handlers sync.Map
}

func newComputeNode(x *Index, idx int, cacheBytes uint64) *computeNode {
	n := max(minFrames, int(cacheBytes/NodeBytes))
	if !x.opt.cached {
		n = 0
	}
	c := &computeNode{x: x, idx: idx, id: x.comps[idx]}
	c.mt.init()
	for i := range n {
		c.frames = append(c.frames, &frame{id: int32(i), data: make(node, NodeBytes)})
	}
	c.cool = newCoolingMap(n, x.opt.fifo)
	return c
}

// bytes is the cache in use.
func (c *computeNode) bytes() uint64 {
	return uint64(min(int(c.used.Load()), len(c.frames))) * NodeBytes
}

func (c *computeNode) hitStats() (uint64, uint64) { return c.hits.Load(), c.seen.Load() }

// reset empties the cache. Callers have quiesced the node (bulk load,
// repartitioning after a flush).
func (c *computeNode) reset() {
	c.mt.clear()
	c.cool.clear()
	c.root.Store(nil)
	for _, f := range c.frames {
		f.state.Store(stateFree)
		f.dirty.Store(false)
		f.parent.Store(nil)
		f.addr.Store(0)
		f.gen.Add(1)
		f.ver.Add(2)
	}
	c.used.Store(0)
	c.rootAddr.Store(0)
	c.latches.clear()
	c.epoch.Add(1)
	c.handlers = sync.Map{}
}
