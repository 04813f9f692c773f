package inner

import (
	"fmt"
	"sync/atomic"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

// MaxRetries bounds every retry loop (re-reads of a torn node, CASes on a
// held lock, restarts after stale caches). Each retry issues a verb or
// backs off, so time moves on; the bound only turns a livelock into an
// error.
const MaxRetries = 1 << 20

// MaxLevels bounds the height of a tree; the root pointer keeps the
// root's level in the low bits nodeAlign leaves free.
const MaxLevels = 32

// Tree is the layer's state of one index instance: where it is built
// from, the root pointer, and per compute node the root that node
// believes in, its index cache and the allocator its clients take nodes
// from.
type Tree struct {
	l       *Layout
	RootPtr transport.GAddr // the root pointer word, in memory node 0's meta area
	// SetupEP and SetupMem are the endpoint and allocator New and
	// BulkLoad build the tree through.
	SetupEP   transport.Endpoint
	SetupMem  *transport.Allocator
	NodeBytes atomic.Uint64 // memory-side bytes of nodes allocated

	firstCN transport.NodeID
	caches  []*nodeCache
	roots   []atomic.Pointer[rootInfo]
	allocs  []*transport.Allocator
}

// rootInfo is what a compute node believes the root is.
type rootInfo struct {
	Addr  transport.GAddr
	Level int
}

// Init sets up t on fabric f for internal nodes of layout l, with an
// index cache of cacheBytes per compute node.
func (t *Tree) Init(f transport.Fabric, l *Layout, cacheBytes uint64) error {
	var err error
	t.l = l
	if t.SetupEP, t.SetupMem, t.RootPtr, err = Setup(f); err != nil {
		return err
	}
	cfg := f.Config()
	t.firstCN = transport.NodeID(cfg.MemoryNodes)
	n := cfg.ComputeNodes
	t.caches = make([]*nodeCache, n)
	t.roots = make([]atomic.Pointer[rootInfo], n)
	t.allocs = make([]*transport.Allocator, n)
	for i := range n {
		t.caches[i] = newNodeCache(l, cacheBytes)
		t.allocs[i] = transport.NewAllocator(f, 0)
	}
	return nil
}

// CN is the index of compute node n among the compute nodes.
func (t *Tree) CN(n transport.NodeID) int { return int(n - t.firstCN) }

// Alloc is the allocator of compute node n's clients.
func (t *Tree) Alloc(n transport.NodeID) *transport.Allocator { return t.allocs[t.CN(n)] }

func (t *Tree) cache(n transport.NodeID) *nodeCache                 { return t.caches[t.CN(n)] }
func (t *Tree) rootOf(n transport.NodeID) *atomic.Pointer[rootInfo] { return &t.roots[t.CN(n)] }

// InitRoot publishes leaf, the image of an empty root leaf, unless a root
// exists, so that a tree works without a bulk load (Sherman issue #26:
// its root broke without one).
func (t *Tree) InitRoot(leaf []byte) error {
	return InitRoot(t.SetupEP, t.RootPtr, leaf, func() (transport.GAddr, error) {
		return t.allocSetup(t.SetupEP, len(leaf))
	})
}

// allocSetup allocates a node of size bytes outside simulated time,
// through ep.
func (t *Tree) allocSetup(ep transport.Endpoint, size int) (transport.GAddr, error) {
	a, err := t.SetupMem.Alloc(ep, uint64(size), nodeAlign)
	if err != nil {
		return 0, err
	}
	t.NodeBytes.Add(uint64(size))
	return a, nil
}

// CopyCache gives compute node to what compute node from of src (t, or a
// tree loaded alike) learned by searching (indexes.CacheCopier): from's
// index cache (copyFrom) and the root it believes in, which is all the state of a compute node a search
// changes; its allocator serves writes alone. The copy equals to's own
// searches when the two nodes started alike, as after a bulk load, which
// caches nothing and makes every node forget the root. It reports false,
// changing nothing, when from's cache has evicted, as copyFrom does.
func (t *Tree) CopyCache(src *Tree, from, to transport.NodeID) bool {
	if !t.cache(to).copyFrom(src.cache(from)) {
		return false
	}
	// A rootInfo is never written once stored, so the nodes may share it.
	t.rootOf(to).Store(src.rootOf(from).Load())
	return true
}

// CacheInfo adds the index caches' bytes, hits and lookups to info.
func (t *Tree) CacheInfo(info *indexes.Info) {
	for _, c := range t.caches {
		info.CacheBytes += c.bytes()
		info.CacheHits += c.hits.Load()
		info.CacheLookups += c.lookups.Load()
	}
}

// errTall is the error of a tree that would grow past MaxLevels.
var errTall = fmt.Errorf("tree taller than %d levels", MaxLevels)
