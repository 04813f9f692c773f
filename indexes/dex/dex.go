package dex

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

const paper = "DEX: Scalable Range Indexing on Disaggregated Memory (VLDB'24)"

func init() {
	indexes.Register(indexes.Spec{
		Name:    "dex",
		Paper:   paper,
		Summary: "B+-tree with logical partitioning, a compute-side cache of inner and leaf nodes and cost-aware offloading",
		Params: []indexes.Param{
			{Name: "partitioning", Kind: indexes.KindBool, Default: "true",
				Doc: "logical partitioning (section 4); false is the baseline RDMA B+-tree of section 8.3, where every node is shared (optimistic RDMA reads, RDMA locks) and needs cache=false"},
			{Name: "cache", Kind: indexes.KindBool, Default: "true",
				Doc: "the compute-side cache of inner and leaf nodes (section 5); false reads every path from the memory pool (section 8.3's first two steps) and turns offloading off, as offloads start at cached nodes"},
			{Name: "offload", Kind: indexes.KindEnum, Default: "cost", Values: []string{"off", "always", "cost"},
				Doc: "opportunistic offloading (section 6, Figure 5): off, always (offload every miss at a level <= M, leaves included: the Offload-only variant), or cost (the load- and cost-aware rule of section 6.1, taken as the artifact does at missed inner nodes of levels 1 to M once the cache is full; see the package doc)"},
			{Name: "cooling", Kind: indexes.KindEnum, Default: "map", Values: []string{"map", "fifo"},
				Doc: "eviction-candidate structure (section 5.2, Figures 4 and 9): the cooling map (buckets of 6 FIFO slots, one lock each) or one FIFO queue under one lock"},
			{Name: "admission", Kind: indexes.KindEnum, Default: "lazy", Values: []string{"lazy", "eager"},
				Doc: "cache admission (section 5.4): lazy admits a fetched leaf with probability leafadmission, eager admits every node"},
			{Name: "leafadmission", Kind: indexes.KindFloat, Default: "0.1", Min: 0, Max: 1,
				Doc: "P_A for leaves under lazy admission (section 5.4: 0.1); inner nodes are always admitted"},
			{Name: "subtreelevel", Kind: indexes.KindInt, Default: "auto", Min: 0, Max: 16, Values: []string{"auto"},
				Doc: "M: every subtree rooted at level M lives on one memory node and offloading starts at levels <= M; section 8.1's M = 3 is one level below the root of its 200 M-record tree, and auto is the level whose node count in the tree the run's records build is nearest that paper tree's 45 subtrees (2 at 1 M and 10 M records, 1 at 100 K), or 3 when the record count is unknown"},
			{Name: "offloadcoefficient", Kind: indexes.KindFloat, Default: "1.2", Min: 1, Max: 10,
				Doc: "c of section 6.1, the cost of using the cache on a fetch (free-page provisioning); the paper gives no value, only c > 1, and the artifact uses 1.2"},
		},
		PaperMode:    func(p indexes.Params) string { return "" },
		Repartitions: true,
		Offload:      offloadHandlers,
		New:          New,
	})
}

// options are the resolved parameters.
type options struct {
	partitioned bool
	cached      bool
	offload     string
	fifo        bool
	leafAdmit   float64
	m           int
	coefficient float64
}

// Index is one DEX tree over a fabric.
type Index struct {
	env    indexes.Env
	params indexes.Params
	opt    options
	l      layout
	mems   []transport.NodeID
	comps  []transport.NodeID
	// meta is memory node 0's meta area (table.go); rootPtr, its first
	// word, holds the root's global address.
	meta, rootPtr transport.GAddr
	allocs        []*transport.Allocator // per node id
	// parts are the partitions as this instance knows them: current for
	// the ranges of the compute nodes it serves (table.go).
	parts atomic.Pointer[partitions]
	// moving serialises this instance's repartitionings (repartition.go).
	moving transport.Mutex
	// cn is per compute node, by index into comps: nil for the compute
	// nodes the instance does not serve (Env.Compute).
	cn []*computeNode
	rr atomic.Uint64 // round-robin placement above level M
}

// New builds an empty DEX tree: a root over one leaf per partition, so
// that no leaf crosses a partition boundary (section 4). With env.Attach
// it opens the tree in memory for one compute node instead (table.go).
func New(env indexes.Env, p indexes.Params) (indexes.Index, error) {
	if env.KeySize < 1 || env.ValueSize < 1 {
		return nil, fmt.Errorf("key size %d and value size %d: both must be positive", env.KeySize, env.ValueSize)
	}
	o := options{
		partitioned: p.Bool("partitioning"),
		cached:      p.Bool("cache"),
		offload:     p.String("offload"),
		fifo:        p.String("cooling") == "fifo",
		leafAdmit:   p.Float("leafadmission"),
		coefficient: p.Float("offloadcoefficient"),
	}
	if p.String("admission") == "eager" {
		o.leafAdmit = 1
	}
	if !o.partitioned && o.cached {
		return nil, fmt.Errorf("dex: partitioning=false needs cache=false: the cache keeps owned leaves dirty without RDMA locks, which is sound only under partitioning (section 8.3 adds partitioning before caching)")
	}
	if !o.cached {
		o.offload = "off"
	}
	l := newLayout(env.KeySize, env.ValueSize)
	if l.leafCap < 4 || l.innerCap < 4 {
		return nil, fmt.Errorf("key size %d and value size %d leave fewer than 4 entries per %d-byte node", env.KeySize, env.ValueSize, NodeBytes)
	}
	if p.String("subtreelevel") == "auto" {
		o.m = autoSubtreeLevel(&l, env.Records)
	} else {
		o.m = p.Int("subtreelevel")
	}
	f := env.Fabric
	cfg := f.Config()
	x := &Index{env: env, params: p, opt: o, l: l, mems: cfg.MemoryNodeIDs(), comps: cfg.ComputeNodeIDs()}
	if len(x.comps) == 0 {
		return nil, fmt.Errorf("dex needs at least one compute node")
	}
	main0, err := f.Region(x.mems[0], "main")
	if err != nil {
		return nil, err
	}
	x.meta, x.rootPtr = main0.Base, main0.Base.Add(metaRoot)
	x.allocs = make([]*transport.Allocator, cfg.NodeCount())
	for i := range x.allocs {
		x.allocs[i] = transport.NewAllocator(f, 0)
	}
	parts, err := newPartitions(env.Partitions, len(x.comps), env.KeySize)
	if err != nil {
		return nil, err
	}
	x.parts.Store(parts)
	setup := f.Setup(x.comps[0])
	if env.Attach {
		if err := x.attach(setup); err != nil {
			return nil, err
		}
	}
	for i, n := range x.comps {
		var c *computeNode
		if env.Serves(n) {
			c = newComputeNode(x, i, env.CacheBytes)
		}
		x.cn = append(x.cn, c)
	}
	if env.Attach {
		// The memory nodes' offload handler, registered by the builder,
		// depends on nothing but the node layout.
		x.serveForward()
		return x, nil
	}
	x.serveOffload()
	x.serveForward()
	if err := x.buildEmpty(setup); err != nil {
		return nil, fmt.Errorf("dex: initial tree: %w", err)
	}
	if err := x.publishMeta(setup); err != nil {
		return nil, err
	}
	return x, nil
}

// Info describes the instance.
func (x *Index) Info() indexes.Info {
	info := indexes.Info{Name: "dex", Paper: paper, Params: x.params}
	for _, c := range x.cn {
		if c == nil {
			continue
		}
		info.CacheBytes += c.bytes()
		h, l := c.hitStats()
		info.CacheHits += h
		info.CacheLookups += l
	}
	var served uint64
	for _, a := range x.allocs {
		served += a.Served()
	}
	info.MemoryBytes = served
	return info
}

// NewClient makes a client for one coroutine of a compute node.
func (x *Index) NewClient(ep transport.Endpoint) indexes.Client {
	return x.newClient(ep)
}

// compute returns the compute-node state of node n, which the instance
// must serve (Env.Compute).
func (x *Index) compute(n transport.NodeID) *computeNode {
	for i, c := range x.comps {
		if c != n {
			continue
		}
		if x.cn[i] == nil {
			panic(fmt.Sprintf("dex: a client of compute node %d on an instance that serves compute nodes %v", n, x.env.Compute))
		}
		return x.cn[i]
	}
	panic(fmt.Sprintf("dex: node %d is not a compute node", n))
}

// sharedRange reports whether a node over [low, high) is shared: it
// crosses a partition boundary, or there is no partitioning and every
// node is shared (section 8.3's baseline).
func (x *Index) sharedRange(p *partitions, low, high []byte) bool {
	return !x.opt.partitioned || p.shared(low, high)
}

// paperSubtreeLevel and paperRecords are section 8.1's M and record
// count.
const (
	paperSubtreeLevel = 3
	paperRecords      = 200_000_000
)

// autoSubtreeLevel is M for a tree of records records: the level whose
// node count, in a bulk load of them, is nearest (by ratio) the number of
// subtrees the paper's M makes of its 200 M records (45 with 8-byte keys
// and values: its root at level 4 has 45 children). Subtrees are what
// spread over the memory nodes, so a scaled run keeps the paper's balance
// among them: M = 2 at 1 M and 10 M records, 1 at 100 K. The paper's M
// itself, or one level below a scaled tree's root, can leave a handful
// of subtrees, one of them nearly the whole tree, on one memory node.
// Without a count it is the paper's 3.
func autoSubtreeLevel(l *layout, records uint64) int {
	if records == 0 {
		return paperSubtreeLevel
	}
	paper := levelCounts(l, paperRecords)
	want := float64(paper[min(paperSubtreeLevel, len(paper)-2)])
	counts := levelCounts(l, records)
	root := len(counts) - 1
	m, best := max(0, root-1), math.Inf(1)
	for lv := root - 1; lv >= 1; lv-- {
		if d := math.Abs(math.Log(float64(counts[lv]) / want)); d < best {
			m, best = lv, d
		}
	}
	return m
}

// levelCounts is the number of nodes at each level, leaves first, of a
// bulk load of records records; the last is the root's 1.
func levelCounts(l *layout, records uint64) []uint64 {
	leafFill, innerFill := bulkFills(l)
	counts := []uint64{ceilDiv(max(records, 1), uint64(leafFill))}
	for n := counts[0]; n > 1; {
		n = ceilDiv(n, uint64(innerFill))
		counts = append(counts, n)
	}
	return counts
}

func ceilDiv(a, b uint64) uint64 { return (a + b - 1) / b }

// placement chooses the memory node of a new node at level lv whose
// neighbour (the node being split, or the old root) lives on near: nodes
// at levels <= M stay with their subtree (section 3).
func (x *Index) placement(lv int, near transport.NodeID) transport.NodeID {
	if lv <= x.opt.m {
		return near
	}
	return x.mems[x.rr.Add(1)%uint64(len(x.mems))]
}

// alloc allocates one node on memory node n for a client on ep's node.
func (x *Index) alloc(ep transport.Endpoint, n transport.NodeID) (transport.GAddr, error) {
	a, err := x.allocs[ep.Node()].AllocOn(ep, n, NodeBytes, NodeBytes)
	if err != nil {
		return 0, fmt.Errorf("dex: allocate a node: %w", err)
	}
	return a, nil
}
