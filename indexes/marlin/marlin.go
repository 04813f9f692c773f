package marlin

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

const paper = "Marlin: A Concurrent and Write-Optimized B+-tree Index on Disaggregated Memory (An, Wang, Feng, Zou, Liu, Zhang; ICPP'23)"

func init() {
	indexes.Register(indexes.Spec{
		Name:    "marlin",
		Paper:   paper,
		Summary: "Sherman's B+-tree and cache with leaves of pointers to out-of-place items, CAS updates and an FAA ternary-state (Spear) leaf lock",
		Params: []indexes.Param{
			{Name: "span", Kind: indexes.KindInt, Default: "64", Min: 4, Max: 4096,
				Doc: "entries per leaf and keys per internal node (Marlin's 64: 1 KB nodes with 8-byte keys)"},
			{Name: "bulk_fill", Kind: indexes.KindFloat, Default: "0.75", Min: 0.05, Max: 1,
				Doc: "fraction of each node BulkLoad fills"},
		},
		New: New,
	})
}

// Index is a Marlin B+-tree on one fabric.
type Index struct {
	env    indexes.Env
	params indexes.Params
	l      layout
	fill   float64

	rootPtr  transport.GAddr // the root pointer word in memory node 0's meta area
	firstCN  transport.NodeID
	setupEP  transport.Endpoint
	setupMem *transport.Allocator

	// Per compute node (index: node id - firstCN).
	caches []*nodeCache
	roots  []atomic.Pointer[rootInfo]
	allocs []*transport.Allocator

	nodeBytes atomic.Uint64 // memory-side bytes of nodes
	itemBytes atomic.Uint64 // memory-side bytes of data items
}

// rootInfo is what a compute node believes the root is.
type rootInfo struct {
	addr  transport.GAddr
	level int
}

// New builds an empty Marlin tree: a root leaf published in memory node
// 0's meta area unless one is there already.
func New(env indexes.Env, p indexes.Params) (indexes.Index, error) {
	if env.Fabric == nil {
		return nil, errors.New("no fabric")
	}
	if env.KeySize <= 0 || env.ValueSize < 0 || env.KeySize >= 1<<16 || env.ValueSize >= 1<<16 {
		return nil, fmt.Errorf("key size %d and value size %d: need a positive key size and sizes below 64 KiB", env.KeySize, env.ValueSize)
	}
	l, err := newLayout(env.KeySize, env.ValueSize, p.Int("span"))
	if err != nil {
		return nil, err
	}
	f := env.Fabric
	cfg := f.Config()
	x := &Index{env: env, params: p, l: l, fill: p.Float("bulk_fill"), firstCN: transport.NodeID(cfg.MemoryNodes)}
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
	x.rootPtr = main.Base
	if err := x.initRoot(); err != nil {
		return nil, err
	}
	n := cfg.ComputeNodes
	x.caches = make([]*nodeCache, n)
	x.roots = make([]atomic.Pointer[rootInfo], n)
	x.allocs = make([]*transport.Allocator, n)
	for i := range n {
		x.caches[i] = newNodeCache(&x.l, env.CacheBytes)
		x.allocs[i] = transport.NewAllocator(f, 0)
	}
	return x, nil
}

// initRoot publishes an empty root leaf unless a root exists.
func (x *Index) initRoot() error {
	ep := x.setupEP
	var w [8]byte
	if err := ep.Read(w[:], x.rootPtr); err != nil {
		return fmt.Errorf("reading the root pointer: %w", err)
	}
	if binary.LittleEndian.Uint64(w[:]) != 0 {
		return nil
	}
	img := make([]byte, x.l.leafBytes)
	x.l.initNode(img, 0, make([]byte, x.l.keySize), nil, 0)
	setConsistent(img)
	a, err := x.setupMem.Alloc(ep, uint64(len(img)), nodeAlign)
	if err != nil {
		return fmt.Errorf("allocating the root leaf: %w", err)
	}
	x.nodeBytes.Add(uint64(len(img)))
	if err := ep.Write(a, img); err != nil {
		return fmt.Errorf("writing the root leaf: %w", err)
	}
	if _, err := ep.CAS(x.rootPtr, 0, rootWord(a, 0)); err != nil {
		return fmt.Errorf("publishing the root leaf: %w", err)
	}
	return nil
}

func (x *Index) cn(n transport.NodeID) int                           { return int(n - x.firstCN) }
func (x *Index) cache(n transport.NodeID) *nodeCache                 { return x.caches[x.cn(n)] }
func (x *Index) rootOf(n transport.NodeID) *atomic.Pointer[rootInfo] { return &x.roots[x.cn(n)] }

// Info describes the instance: the memory side counts nodes and items.
func (x *Index) Info() indexes.Info {
	info := indexes.Info{
		Name: "marlin", Paper: paper, Params: x.params,
		MemoryBytes: x.nodeBytes.Load() + x.itemBytes.Load(),
	}
	for _, c := range x.caches {
		info.CacheBytes += c.bytes()
		info.CacheHits += c.hits.Load()
		info.CacheLookups += c.lookups.Load()
	}
	return info
}

// NewClient makes a client for one coroutine.
func (x *Index) NewClient(ep transport.Endpoint) indexes.Client {
	return indexes.Checked("marlin", x.l.keySize, x.l.valSize, x.newClient(ep))
}

// newClient is NewClient's core.
func (x *Index) newClient(ep transport.Endpoint) *client {
	size := max(x.l.leafBytes, x.l.innerBytes)
	return &client{
		x: x, ep: ep, tag: threadTag(ep),
		buf: make([]byte, size), aux: make([]byte, size), sib: make([]byte, size),
		item: make([]byte, x.l.itemBytes),
	}
}

// threadTag is the non-zero word a client writes into an internal node's
// lock.
func threadTag(ep transport.Endpoint) uint64 {
	return uint64(ep.Node())<<16 | uint64(ep.Thread()&0xffff) + 1
}
