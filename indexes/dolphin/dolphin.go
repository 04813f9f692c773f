package dolphin

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/combine"
	"github.com/dmbench/dmbench/transport"
)

const paper = "Dolphin: A Resource-efficient Hybrid Index on Disaggregated Memory (An, Wang, Feng, Liu; MSST'24)"

func init() {
	indexes.Register(indexes.Spec{
		Name:    "dolphin",
		Paper:   paper,
		Summary: "ART internal nodes cached on compute nodes over B+-tree leaves of one key prefix; FAA-only Spear lock, 2-RTT updates by RNIC write ordering",
		Params: []indexes.Param{
			{Name: "leaf_bytes", Kind: indexes.KindInt, Default: "1024", Min: 128, Max: 65536,
				Doc: "bytes per leaf (Dolphin section IV.A: 1 KB leaves); sets the span unless span is given"},
			{Name: "span", Kind: indexes.KindInt, Default: "0", Min: 0, Max: 256,
				Doc: "key slots per leaf (the leaf grows to fit them); 0 fits as many as leaf_bytes holds"},
			{Name: "combine", Kind: indexes.KindBool, Default: "true",
				Doc: "SMART's local lock table, on in Dolphin's code: read delegation and write combining among one compute node's clients"},
		},
		PaperMode: func(indexes.Params) string {
			return "a search trusts a value of up to 64 bytes read while an update WRITEs it (MS-RNIC write synchronisation, section III.C) and a leaf's front/rear versions to expose a READ torn by a split, which holds only with 64-byte cacheline atomicity and WRITEs landing in increasing address order"
		},
		New: New,
	})
}

// Index is a Dolphin hybrid index on one fabric.
type Index struct {
	env     indexes.Env
	params  indexes.Params
	l       layout
	root    transport.GAddr // the root Node256, at a fixed address
	firstCN transport.NodeID

	setupEP  transport.Endpoint
	setupMem *transport.Allocator

	caches []*artCache            // by compute node
	combs  combine.Nodes          // nil when combine is off
	allocs []*transport.Allocator // by compute node
	bytes  atomic.Uint64          // memory-side bytes allocated
}

// metaRoot is where memory node 0's meta area holds the root's address.
const metaRoot = 0

// New builds an empty index: a root Node256 published in memory node 0's
// meta area unless one is there already.
func New(env indexes.Env, p indexes.Params) (indexes.Index, error) {
	if env.Fabric == nil {
		return nil, errors.New("no fabric")
	}
	l, err := newLayout(env.KeySize, env.ValueSize, p.Int("leaf_bytes"), p.Int("span"))
	if err != nil {
		return nil, err
	}
	f := env.Fabric
	cfg := f.Config()
	x := &Index{env: env, params: p, l: l, firstCN: transport.NodeID(cfg.MemoryNodes)}
	setupNode := transport.NodeID(0)
	if cfg.ComputeNodes > 0 {
		setupNode = x.firstCN
	}
	x.setupEP = f.Setup(setupNode)
	x.setupMem = transport.NewAllocator(f, 0)
	main, err := f.Region(0, "main")
	if err != nil {
		return nil, fmt.Errorf("root pointer: %w", err)
	}
	if err := x.initRoot(main.Base.Add(metaRoot)); err != nil {
		return nil, err
	}
	for range cfg.ComputeNodes {
		x.caches = append(x.caches, newARTCache(env.CacheBytes))
		x.allocs = append(x.allocs, transport.NewAllocator(f, 0))
	}
	if p.Bool("combine") {
		x.combs = combine.NewNodes(cfg, combine.ReadWindow)
	}
	return x, nil
}

func (x *Index) initRoot(ptr transport.GAddr) error {
	ep := x.setupEP
	var w [8]byte
	if err := ep.Read(w[:], ptr); err != nil {
		return fmt.Errorf("reading the root pointer: %w", err)
	}
	if a := transport.GAddr(leUint64(w[:])); a != 0 {
		x.root = a
		return nil
	}
	img := x.l.encodeInner(makeHeader(0, 0, node256), nil, make([]slot, 256))
	a, err := x.setupMem.Alloc(ep, uint64(len(img)), nodeAlign)
	if err != nil {
		return fmt.Errorf("allocating the root: %w", err)
	}
	if err := ep.Write(a, img); err != nil {
		return fmt.Errorf("writing the root: %w", err)
	}
	old, err := ep.CAS(ptr, 0, uint64(a))
	if err != nil {
		return fmt.Errorf("publishing the root: %w", err)
	}
	if old != 0 {
		a = transport.GAddr(old)
	}
	x.root = a
	return nil
}

// nodeAlign aligns nodes to cachelines.
const nodeAlign = transport.CachelineBytes

func (x *Index) cn(n transport.NodeID) int { return int(n - x.firstCN) }

// cacheOf and allocOf are the compute node's cache and allocator; the
// setup endpoint (bulk load) uses the first compute node's.
func (x *Index) cacheOf(n transport.NodeID) *artCache {
	if i := x.cn(n); i >= 0 && i < len(x.caches) {
		return x.caches[i]
	}
	return newARTCache(0)
}

func (x *Index) allocOf(n transport.NodeID) *transport.Allocator {
	if i := x.cn(n); i >= 0 && i < len(x.allocs) {
		return x.allocs[i]
	}
	return x.setupMem
}

// Info describes the instance. MemoryBytes counts every byte the index
// allocated on memory nodes (root, internal nodes, leaves, including nodes
// a replacement left behind).
func (x *Index) Info() indexes.Info {
	p := indexes.Params{}
	for k, v := range x.params {
		p[k] = v
	}
	info := indexes.Info{Name: "dolphin", Paper: paper, Params: p, MemoryBytes: uint64(x.l.innerBytes(node256)) + x.bytes.Load()}
	for _, c := range x.caches {
		info.CacheBytes += c.bytes()
		info.CacheHits += c.hits.Load()
		info.CacheLookups += c.lookups.Load()
	}
	return info
}

// NewClient makes a client for one coroutine.
func (x *Index) NewClient(ep transport.Endpoint) indexes.Client {
	return &client{x: x, l: &x.l, ep: ep, cache: x.cacheOf(ep.Node()), alloc: x.allocOf(ep.Node()), comb: x.combs.Client(ep)}
}
