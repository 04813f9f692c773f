package smart

import (
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

const paper = "SMART: A High-Performance Adaptive Radix Tree for Disaggregated Memory (Luo et al., OSDI'23); P-SMART as in DEX (VLDB'24) section 8"

func init() {
	indexes.Register(indexes.Spec{
		Name:    "smart",
		Paper:   paper,
		Summary: "adaptive radix tree: 2 KB internal nodes read by type, one-KV leaves, lock-free CAS slots, radix cache with a shared FIFO, read delegation and write combining",
		Params: []indexes.Param{
			{Name: "maskedcas", Kind: indexes.KindBool, Default: "true",
				Doc: "use masked CAS for leaf locks and node type switches (SMART's code, MLNX_OFED 4.x); false stands for drivers without it (DMTree section 5.1): plain CAS on the whole word, expecting the word last read and retrying with the word a failed CAS returns"},
			{Name: "partitioned", Kind: indexes.KindBool, Default: "false",
				Doc: "P-SMART (DEX section 8): each compute node owns a key range (Env.Partitions) and locks its leaves with local locks, without RDMA atomics"},
			{Name: "delegation", Kind: indexes.KindBool, Default: "true",
				Doc: "read delegation and write combining among the clients of one compute node (SMART section 4.3)"},
			{Name: "variant", Kind: indexes.KindEnum, Default: variantDmemsys, Values: []string{variantDmemsys, variantDEX},
				Doc: "whose SMART: dmemsys, the authors' artifact (dmemsys/SMART); dex, the copy DEX's section 8 measured (baotonglu/dex include/smart): 48-byte unpacked leaves with an 8-byte lock word taken by plain CAS, every internal node a 256-slot node, no masked CAS (maskedcas has no effect)"},
		},
		Partitioned: func(p indexes.Params) bool { return p.Bool("partitioned") },
		New:         New,
	})
}

// The variants (doc.go, Variants).
const (
	variantDmemsys = "dmemsys"
	variantDEX     = "dex"
)

// Index is a SMART tree on one fabric.
type Index struct {
	env       indexes.Env
	params    indexes.Params
	ll        leafLayout
	maskedCAS bool
	combine   bool
	rootPtr   transport.GAddr // the root slot, a fixed word on memory node 0
	parts     *partitions     // nil unless partitioned
	nodes     []*computeNode  // indexed by NodeID; nil for memory nodes
	setupMem  *transport.Allocator
	leaves    atomic.Uint64
	inners    atomic.Uint64

	// dex: variant=dex, DEX's copy of SMART (doc.go, Variants), whose
	// nodes are all of the 256-slot type.
	dex bool
}

// computeNode is what the clients of one compute node share.
type computeNode struct {
	cache *radixCache
	table *localTable
	locks *localLocks // P-SMART's leaf locks
	alloc *transport.Allocator
}

// New builds an empty SMART: a null root slot. With env.Attach it opens
// the SMART another compute node built, leaving the root slot as it is.
func New(env indexes.Env, p indexes.Params) (indexes.Index, error) {
	if env.KeySize <= 0 || env.KeySize > 255 || env.ValueSize < 0 {
		return nil, fmt.Errorf("key size %d and value size %d: need a key of 1-255 bytes", env.KeySize, env.ValueSize)
	}
	f := env.Fabric
	cfg := f.Config()
	if cfg.MemoryNodes > 256 {
		return nil, fmt.Errorf("%d memory nodes: slots hold an 8-bit memory node id", cfg.MemoryNodes)
	}
	x := &Index{env: env, params: p, ll: newLeafLayout(env.KeySize, env.ValueSize),
		maskedCAS: p.Bool("maskedcas"), combine: p.Bool("delegation"), dex: p["variant"] == variantDEX}
	if x.dex {
		x.ll = newDexLeafLayout(env.KeySize, env.ValueSize)
		x.maskedCAS = false
	}
	if p.Bool("partitioned") {
		parts, err := newPartitions(env.Partitions, cfg.ComputeNodeIDs(), env.KeySize)
		if err != nil {
			return nil, err
		}
		x.parts = parts
	}
	main, err := f.Region(cfg.MemoryNodeIDs()[0], "main")
	if err != nil {
		return nil, fmt.Errorf("root pointer: %w", err)
	}
	x.rootPtr = main.Base
	x.setupMem = transport.NewAllocator(f, 0)
	x.nodes = make([]*computeNode, cfg.NodeCount())
	for _, n := range cfg.ComputeNodeIDs() {
		x.nodes[n] = &computeNode{
			cache: newRadixCache(env.CacheBytes),
			table: newLocalTable(),
			locks: newLocalLocks(),
			alloc: transport.NewAllocator(f, 0),
		}
	}
	if env.Attach {
		// The root slot is the tree's only entry point, and clients read
		// it through their verbs: an attaching compute node learns the
		// tree from there and must not clear it.
		return x, nil
	}
	if err := f.Setup(cfg.MemoryNodeIDs()[0]).Write(x.rootPtr, make([]byte, 8)); err != nil {
		return nil, fmt.Errorf("initialising the root slot: %w", err)
	}
	return x, nil
}

// Info describes the instance.
func (x *Index) Info() indexes.Info {
	var cache, hits, lookups uint64
	for _, cn := range x.nodes {
		if cn == nil {
			continue
		}
		cache += cn.cache.bytes()
		hits += cn.cache.hits.Load()
		lookups += cn.cache.lookups.Load()
	}
	params := indexes.Params{}
	for k, v := range x.params {
		params[k] = v
	}
	// maskedcas is listed as set, also under variant=dex, which issues
	// no masked CAS and leaves it unused.
	params["maskedcas"] = strconv.FormatBool(x.params.Bool("maskedcas"))
	return indexes.Info{
		Name: "smart", Paper: paper, Params: params,
		CacheBytes:   cache,
		MemoryBytes:  x.leaves.Load()*x.ll.alloc + x.inners.Load()*roundAlloc(nodeBytes),
		CacheHits:    hits,
		CacheLookups: lookups,
	}
}

// CopyCaches gives compute node to what the searches of compute node from
// left there (indexes.CacheCopier): its radix cache, copied afresh
// (radixCache.copyFrom). That is all a search changes: it READs through
// its endpoint, draws nothing at random and writes nothing in memory;
// the local lock table holds no group once the searches have ended, and
// its locks, like the cache's micro-queues, are free; the allocator and
// P-SMART's leaf locks are the writers'. The bulk load goes through
// memory allocated for setup, not through node 0's allocator or cache,
// so every compute node starts alike. The copy is thus exact in every
// configuration, the partitioned one included.
func (x *Index) CopyCaches(src indexes.Index, from, to transport.NodeID) (bool, error) {
	s, ok := src.(*Index)
	if !ok {
		return false, nil
	}
	if s != x || from != to { // a node is already what its own searches left
		x.nodes[to].cache.copyFrom(s.nodes[from].cache, to)
	}
	return true, nil
}

// NewClient makes a client for one coroutine.
func (x *Index) NewClient(ep transport.Endpoint) indexes.Client {
	cn := x.nodes[ep.Node()]
	if cn == nil {
		panic(fmt.Sprintf("smart: client on node %d, which is not a compute node", ep.Node()))
	}
	return &client{x: x, ep: ep, cn: cn, ll: &x.ll}
}

// client runs the operations of one coroutine.
type client struct {
	x  *Index
	ep transport.Endpoint
	cn *computeNode
	ll *leafLayout
	// reads counts the READs the client has posted, numbering them.
	reads int64
	// leading, when not nil, is the read group whose search the client
	// leads: read delegation numbers its leader's READs (readGroup.posted).
	leading *readGroup
	// group is the read group of the searches the client leads, reused
	// from one to the next.
	group readGroup
	// scratch holds the READ buffers and key paths of the client's
	// range queries, reused from one Scan to the next.
	scratch  arena
	scanBufs scanBufs
	// nodeBuf is readNode's READ buffer, reused from one node to the next.
	nodeBuf []byte
}

// newType is the type of the nodes an insert creates: the smallest, or
// with variant=dex the 256-slot type, as DEX's copy makes every node
// (num_to_node_type, include/smart/Node.h:161-162; see doc.go).
func (x *Index) newType() int {
	if x.dex {
		return numTypes - 1
	}
	return 0
}

// allocLeaf and allocNode allocate 256-byte aligned blocks.
func (c *client) allocLeaf() (transport.GAddr, error) {
	a, err := c.cn.alloc.Alloc(c.ep, c.ll.alloc, allocAlign)
	if err != nil {
		return 0, fmt.Errorf("allocating a leaf: %w", err)
	}
	c.x.leaves.Add(1)
	return a, nil
}

func (c *client) allocNode() (transport.GAddr, error) {
	a, err := c.cn.alloc.Alloc(c.ep, roundAlloc(nodeBytes), allocAlign)
	if err != nil {
		return 0, fmt.Errorf("allocating a node: %w", err)
	}
	c.x.inners.Add(1)
	return a, nil
}
