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
	x   *Index
	idx int
	id  transport.NodeID
	// frames[i] is frame i, nil until the chunk of frames holding it is
	// first handed out (fresh).
	frames []*frame
	pages  []byte       // the frames' images, NodeBytes each
	used   atomic.Int64 // frames handed out at least once
	// freshMu serialises handing out never used frames, so that frames
	// [0, used) are always allocated.
	freshMu sync.Mutex
	mt      mappingTable
	cool    *coolingMap
	root    atomic.Pointer[frame]
	rootMu  transport.Mutex // serialises root installs and root splits
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
	// One allocation for all pages, and frames in chunks as they are
	// first handed out: a cache of 256 MB is 2^18 frames per compute
	// node, a run's data set often fills a small part of it, and both
	// readying every frame up front and the garbage collector's scans of
	// them (frames hold pointers) cost more than many a whole run's
	// operations. Pages never touched stay zero pages of the OS.
	c.pages = make([]byte, n*NodeBytes)
	c.frames = make([]*frame, n)
	c.cool = newCoolingMap(n, x.opt.fifo)
	return c
}

// frameChunk is how many frames fresh allocates at a time.
const frameChunk = 1024

// fresh hands out the next never used frame (used), nil when every frame
// has been.
func (c *computeNode) fresh() *frame {
	c.freshMu.Lock()
	defer c.freshMu.Unlock()
	i := int(c.used.Load())
	if i >= len(c.frames) {
		return nil
	}
	if c.frames[i] == nil {
		chunk := make([]frame, min(frameChunk, len(c.frames)-i))
		for j := range chunk {
			f, k := &chunk[j], i+j
			f.id, f.data = int32(k), node(c.pages[k*NodeBytes:(k+1)*NodeBytes:(k+1)*NodeBytes])
			// A page's OptLock (include/cache/btree_node.h): one CAS,
			// pause and retry; DEX has no coroutines, its threads spin.
			f.wl.Kind = transport.LockSpin
			c.frames[k] = f
		}
	}
	c.used.Store(int64(i + 1))
	return c.frames[i]
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
	// Frames past used have not been handed out since the last reset.
	for _, f := range c.frames[:c.used.Load()] {
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
