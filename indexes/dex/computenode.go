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
	// frozen is the key range a repartitioning of this node is moving
	// away (nil when none): new operations on it wait on thaw, which the
	// repartitioning holds until the new partitions are installed.
	frozen atomic.Pointer[keyRange]
	thaw   transport.Mutex
	// freed holds the frames a repartitioning dropped, for any thread
	// that runs out of free pages.
	freedMu sync.Mutex
	freed   []*frame
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
	c.rootMu.Kind = transport.LockSpin // the super root's OptLock
	c.mt.init()
	// One allocation for all frames and one for their pages: a cache of
	// 256 MB is 2^18 frames per compute node, and allocating them one by
	// one dominated building the index. Pages never touched stay zero
	// pages of the OS.
	frames, pages := make([]frame, n), make([]byte, n*NodeBytes)
	c.frames = make([]*frame, n)
	for i := range frames {
		f := &frames[i]
		f.id, f.data = int32(i), node(pages[i*NodeBytes:(i+1)*NodeBytes:(i+1)*NodeBytes])
		// A page's OptLock (include/cache/btree_node.h): one CAS, pause
		// and retry; DEX has no coroutines, its threads spin.
		f.wl.Kind = transport.LockSpin
		c.frames[i] = f
	}
	c.cool = newCoolingMap(n, x.opt.fifo)
	return c
}

// bytes is the cache in use.
func (c *computeNode) bytes() uint64 {
	return uint64(min(int(c.used.Load()), len(c.frames))) * NodeBytes
}

// dynamic reports whether every page of the cache has been handed out,
// the artifact's dynamic phase (CacheManager::state in
// include/cache/leanstore_cache.h): only then does DEX offload.
func (c *computeNode) dynamic() bool { return c.used.Load() >= int64(len(c.frames)) }

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
	c.freedMu.Lock()
	c.freed = nil
	c.freedMu.Unlock()
}

// enter takes the shared ownership hold for an operation on key that
// parts routed here. It holds nothing and returns false when parts is no
// longer current, or when key is being moved away, after waiting for the
// move to end: the caller routes the operation again.
func (c *computeNode) enter(ep transport.Endpoint, key []byte, parts *partitions) bool {
	c.own.RLock(ep)
	if c.x.parts.Load() != parts {
		c.own.RUnlock()
		return false
	}
	if fr := c.frozen.Load(); fr != nil && fr.contains(key) {
		c.own.RUnlock()
		c.thaw.Lock(ep)
		c.thaw.Unlock()
		return false
	}
	return true
}

// takeFreed returns a frame a repartitioning dropped, nil when none.
func (c *computeNode) takeFreed() *frame {
	c.freedMu.Lock()
	defer c.freedMu.Unlock()
	n := len(c.freed)
	if n == 0 {
		return nil
	}
	f := c.freed[n-1]
	c.freed = c.freed[:n-1]
	return f
}
