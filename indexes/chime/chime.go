package chime

import (
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/combine"
	"github.com/dmbench/dmbench/transport"
)

const paper = "CHIME (Luo et al., SOSP'24), as measured in DMTree (FAST'26) sections 2.3-2.4 and 5"

func init() {
	indexes.Register(indexes.Spec{
		Name:    "chime",
		Paper:   paper,
		Summary: "B+-tree with hopscotch-hashed leaves: one neighbourhood READ per search, vacancy-aware masked-CAS leaf locks",
		Params: []indexes.Param{
			{Name: "span", Kind: indexes.KindInt, Default: "64", Min: 4, Max: 1024,
				Doc: "leaf span: entry slots per leaf (CHIME 64; the DMTree experiments use 32)"},
			{Name: "neighbourhood", Kind: indexes.KindInt, Default: "8", Min: 2, Max: 64,
				Doc: "hopscotch neighbourhood: slots a key may sit from its home slot, read by every search"},
			{Name: "innerspan", Kind: indexes.KindInt, Default: "64", Min: 4, Max: 1024,
				Doc: "internal node span: separators per internal node"},
			{Name: "hotspot", Kind: indexes.KindFloat, Default: "0.3", Min: 0, Max: 0.9,
				Doc: "fraction of the cache given to the hotspot buffer (CHIME: 30 MB of a 100 MB cache); 0 disables speculative searches"},
			{Name: "combine", Kind: indexes.KindBool, Default: "true",
				Doc: "read delegation and write combining among the coroutines of a compute node (SMART's local lock table, on in the DMTree artifact's CHIME build)"},
			{Name: "maskedcas", Kind: indexes.KindBool, Default: "true",
				Doc: "lock leaves with masked CAS; false stands for MLNX_OFED >= 5.1, whose drivers dropped masked CAS (DMTree section 5.1): as the DMTree artifact's CHIME, a plain CAS of a lock word beside the bitmap word, which inserts READ after locking"},
		},
		PaperMode: func(indexes.Params) string {
			return "per-cacheline 1-byte versions detect a torn leaf entry only if every 64-byte line lands whole; in strict mode a line can mix old and new bytes under matching versions, so searches may return torn values"
		},
		New: New,
	})
}

// Chime is one CHIME index over a fabric.
type Chime struct {
	env       indexes.Env
	params    indexes.Params
	g         geometry
	ig        innerGeometry
	maskedCAS bool
	root      transport.GAddr // word holding the root node's address
	allocs    []*transport.Allocator
	caches    []*nodeCache     // per compute node, indexed by NodeID
	hot       []*hotspotBuffer // per compute node
	comb      combine.Nodes    // nil without combine
	leaves    atomic.Uint64
	inners    atomic.Uint64
}

// New builds an empty CHIME: one empty leaf under a root at level 1. With
// env.Attach it opens the CHIME another compute node built, leaving the
// tree and its root pointer as they are.
func New(env indexes.Env, p indexes.Params) (indexes.Index, error) {
	if env.KeySize <= 0 || env.ValueSize < 0 {
		return nil, fmt.Errorf("key size %d and value size %d: need a positive key size", env.KeySize, env.ValueSize)
	}
	g, err := newGeometry(env.KeySize, env.ValueSize, p.Int("span"), p.Int("neighbourhood"))
	if err != nil {
		return nil, err
	}
	x := &Chime{env: env, params: p, g: g, ig: newInnerGeometry(env.KeySize, p.Int("innerspan")), maskedCAS: p.Bool("maskedcas")}
	f := env.Fabric
	cfg := f.Config()
	main, err := f.Region(cfg.MemoryNodeIDs()[0], "main")
	if err != nil {
		return nil, err
	}
	x.root = main.Base
	n := cfg.NodeCount()
	x.allocs = make([]*transport.Allocator, n)
	x.caches = make([]*nodeCache, n)
	x.hot = make([]*hotspotBuffer, n)
	hotBudget := uint64(float64(env.CacheBytes) * p.Float("hotspot"))
	for i := range n {
		x.allocs[i] = transport.NewAllocator(f, 0)
		x.caches[i] = newNodeCache(env.CacheBytes-hotBudget, x.ig.bytes)
		x.hot[i] = newHotspotBuffer(hotBudget)
	}
	if p.Bool("combine") {
		x.comb = combine.NewNodes(cfg, combine.ReadWindow)
	}
	if env.Attach {
		// The root pointer in the meta area is the tree's only entry
		// point, and clients read it through their verbs on first use
		// (client.root): an attaching compute node learns the tree from
		// there and must not lay out a new one.
		return x, nil
	}
	if err := x.init(f.Setup(cfg.MemoryNodeIDs()[0])); err != nil {
		return nil, fmt.Errorf("initialising the tree: %w", err)
	}
	return x, nil
}

// Info describes the instance.
func (x *Chime) Info() indexes.Info {
	var cache, hits, lookups uint64
	for i, c := range x.caches {
		if x.env.Fabric.Config().Role(transport.NodeID(i)) != transport.RoleCompute {
			continue
		}
		cache += c.bytes(x.ig.bytes) + x.hot[i].bytes()
		hits += c.hits.Load()
		lookups += c.lookups.Load()
	}
	params := indexes.Params{}
	for k, v := range x.params {
		params[k] = v
	}
	params["maskedcas"] = strconv.FormatBool(x.maskedCAS)
	return indexes.Info{
		Name: "chime", Paper: paper, Params: params,
		CacheBytes:   cache,
		MemoryBytes:  x.leaves.Load()*uint64(x.g.leafBytes) + x.inners.Load()*uint64(x.ig.bytes),
		CacheHits:    hits,
		CacheLookups: lookups,
	}
}

// CopyCaches gives compute node to what compute node from learned by
// searching (indexes.CacheCopier): its internal-node cache (nodes, root,
// hit and lookup counters), its hotspot buffer and its read-delegation
// round counts. That is exact: a search READs only, changes nothing but
// its own node's cache, hotspot buffer and local lock table, and draws on
// no random source; the bulk load, through compute node 0, leaves none of
// them behind (it builds nodes without caching them, and takes only the
// allocator, which searches never use and which is not copied). Every
// parameter setting copies.
func (x *Chime) CopyCaches(src indexes.Index, from, to transport.NodeID) (bool, error) {
	s, ok := src.(*Chime)
	if !ok {
		return false, nil
	}
	if s == x && from == to {
		return true, nil // the copies below would lock a mutex twice
	}
	x.caches[to].copyFrom(s.caches[from])
	x.hot[to].copyFrom(s.hot[from])
	x.comb.CopyCounts(s.comb, from, to)
	return true, nil
}

// NewClient makes a client for one coroutine.
func (x *Chime) NewClient(ep transport.Endpoint) indexes.Client {
	n := ep.Node()
	return &client{x: x, ep: ep, g: &x.g, cache: x.caches[n], hot: x.hot[n], comb: x.comb.Client(ep), alloc: x.allocs[n]}
}

// client runs the operations of one coroutine.
type client struct {
	x     *Chime
	ep    transport.Endpoint
	g     *geometry
	cache *nodeCache
	hot   *hotspotBuffer
	alloc *transport.Allocator
	// comb is the compute node's local lock table (combine.go); it runs
	// every operation on its own without combine.
	comb combine.Client
	// win, and slotRead and slotItem (the image and the decoded entry of
	// readSlot), are reused by the client's READs of leaves.
	win                window
	slotRead, slotItem []byte
}
