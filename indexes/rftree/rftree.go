package rftree

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/internal/inner"
	"github.com/dmbench/dmbench/transport"
)

const paper = "Converting Concurrent Range Index Structure to Range Index Structure for Disaggregated Memory (SPREAD / RF-tree; Koo, Hwang, Park, Kim; Applied Sciences 2023)"

// Steps label the time of the algorithm's steps in a run's breakdown:
// checksum work (RF-tree Figure 8's CRC) and SLC refreshes.
const (
	stepCRC     transport.Step = 1
	stepRefresh transport.Step = 2
)

func init() {
	indexes.Register(indexes.Spec{
		Name:    "rftree",
		Paper:   paper,
		Summary: "B-link tree converted by SPREAD: log-structured search layer cached whole per compute node (SLC), CRC-checked sorted data nodes with in-node locks",
		Steps:   []string{"crc", "refresh"},
		Params: []indexes.Param{
			{Name: "node_bytes", Kind: indexes.KindInt, Default: "1024", Min: 128, Max: 65536,
				Doc: "bytes per data node and internal node (Sherman's 1 KB page; the paper does not say)"},
			{Name: "chunk_bytes", Kind: indexes.KindInt, Default: "65536", Min: 4096, Max: 1 << 30,
				Doc: "bytes per search-layer chunk: internal nodes are appended to chunks spread over the memory nodes, and an SLC refresh READs each chunk in one READ"},
			{Name: "refresh_hops", Kind: indexes.KindInt, Default: "1", Min: 0, Max: 1 << 20,
				Doc: "sibling pointers an operation may follow past where the SLC sent it before the SLC is refreshed copy-on-write (the paper's threshold)"},
			{Name: "merge_fill", Kind: indexes.KindFloat, Default: "0.25", Min: 0, Max: 0.5,
				Doc: "a delete that leaves a data node below this fraction of its capacity merges its right sibling into it when both fit in one node (0: never merge)"},
			{Name: "bulk_fill", Kind: indexes.KindFloat, Default: "0.75", Min: 0.05, Max: 1,
				Doc: "fraction of each node BulkLoad fills"},
		},
		New: New,
	})
}

// Index is an RF-tree on one fabric.
type Index struct {
	env        indexes.Env
	params     indexes.Params
	l          layout
	chunkBytes uint64
	refreshHop int
	mergeBelow int // a data node with fewer entries after a delete merges
	fill       float64

	rootPtr transport.GAddr // root word: memory node 0, meta area + 0
	dir     transport.GAddr // search-layer chunk directory
	firstCN transport.NodeID
	setupEP transport.Endpoint
	setup   *transport.Allocator

	cns []*computeNode // by compute node id - firstCN

	dataBytes  atomic.Uint64 // memory-side bytes of data nodes
	chunkTotal atomic.Uint64 // memory-side bytes of search-layer chunks
}

// computeNode is the state the clients of one compute node share: the
// search layer cache, its refresh lock, the local free list of data nodes
// and the allocator of data-node memory.
type computeNode struct {
	slc       atomic.Pointer[snapshot]
	refreshMu transport.Mutex // one refresher at a time; held across READs
	versions  atomic.Uint64   // SLC versions built

	alloc *transport.Allocator
	chunk atomic.Int64 // search-layer chunk this node appends to; -1: none yet

	freeMu sync.Mutex // never held across a verb
	free   []freePage

	hits, lookups atomic.Uint64
	// refreshes, splits and merges count SLC rebuilds and data-node
	// structure modifications, for tests and reports.
	refreshes, splits, merges atomic.Uint64
}

// freePage is a data node given back by a merge, with the version of its
// lock word, so that its next use continues the version (a writer holding
// an old image of the page can never CAS it again).
type freePage struct {
	addr    transport.GAddr
	version uint64
}

// The meta area of memory node 0 holds the root word and the address of
// the search-layer directory.
const (
	metaRoot = 0
	metaDir  = 8
)

// dirChunks bounds the search-layer chunks: the directory is [count 8 B]
// then per chunk [address 8 B][tail 8 B], the tail counting bytes handed
// out (FAA).
const dirChunks = 4096

// New builds an empty RF-tree: the chunk directory, and a root data node
// published in memory node 0's meta area (unless they are there already).
func New(env indexes.Env, p indexes.Params) (indexes.Index, error) {
	if env.Fabric == nil {
		return nil, errors.New("no fabric")
	}
	if env.KeySize <= 0 || env.ValueSize < 0 {
		return nil, fmt.Errorf("key size %d and value size %d: need a positive key size", env.KeySize, env.ValueSize)
	}
	l, err := newLayout(env.KeySize, env.ValueSize, p.Int("node_bytes"))
	if err != nil {
		return nil, err
	}
	f := env.Fabric
	cfg := f.Config()
	x := &Index{
		env: env, params: p, l: l,
		chunkBytes: uint64(p.Int("chunk_bytes")) &^ (transport.CachelineBytes - 1),
		refreshHop: p.Int("refresh_hops"),
		mergeBelow: int(p.Float("merge_fill") * float64(l.leafCard)),
		fill:       p.Float("bulk_fill"),
		firstCN:    transport.NodeID(cfg.MemoryNodes),
	}
	if x.chunkBytes < uint64(l.nodeBytes) {
		return nil, fmt.Errorf("chunk_bytes %d holds no node of %d bytes", x.chunkBytes, l.nodeBytes)
	}
	var meta transport.GAddr
	if x.setupEP, x.setup, meta, err = inner.Setup(f); err != nil {
		return nil, err
	}
	x.rootPtr = meta.Add(metaRoot)
	if err := x.initDirectory(meta.Add(metaDir)); err != nil {
		return nil, err
	}
	if err := x.initRoot(); err != nil {
		return nil, err
	}
	x.cns = make([]*computeNode, cfg.ComputeNodes)
	for i := range x.cns {
		cn := &computeNode{alloc: transport.NewAllocator(f, 0)}
		cn.chunk.Store(-1)
		x.cns[i] = cn
	}
	return x, nil
}

// initDirectory finds or makes the search-layer chunk directory and
// publishes its address with a CAS, so that every process agrees on it.
func (x *Index) initDirectory(meta transport.GAddr) error {
	ep := x.setupEP
	var w [8]byte
	if err := ep.Read(w[:], meta); err != nil {
		return fmt.Errorf("reading the directory address: %w", err)
	}
	if a := binary.LittleEndian.Uint64(w[:]); a != 0 {
		x.dir = transport.GAddr(a)
		return nil
	}
	a, err := x.setup.AllocOn(ep, 0, 8+16*dirChunks, transport.RegionAlign)
	if err != nil {
		return fmt.Errorf("allocating the search-layer directory: %w", err)
	}
	old, err := ep.CAS(meta, 0, uint64(a))
	if err != nil {
		return fmt.Errorf("publishing the search-layer directory: %w", err)
	}
	if old != 0 {
		a = transport.GAddr(old)
	}
	x.dir = a
	return nil
}

// initRoot publishes an empty root data node unless a root exists.
func (x *Index) initRoot() error {
	img := make([]byte, x.l.nodeBytes)
	x.l.initNode(img, 0, make([]byte, x.l.keySize), nil, 0, 0)
	x.l.seal(img)
	return inner.InitRoot(x.setupEP, x.rootPtr, img, func() (transport.GAddr, error) {
		a, err := x.setup.Alloc(x.setupEP, uint64(len(img)), nodeAlign)
		if err != nil {
			return 0, err
		}
		x.dataBytes.Add(uint64(len(img)))
		return a, nil
	})
}

// nodeAlign aligns nodes to cachelines.
const nodeAlign = transport.CachelineBytes

func (x *Index) cn(n transport.NodeID) *computeNode { return x.cns[int(n-x.firstCN)] }

// Info describes the instance.
func (x *Index) Info() indexes.Info {
	info := indexes.Info{
		Name: "rftree", Paper: paper, Params: x.params,
		MemoryBytes: x.dataBytes.Load() + x.chunkTotal.Load() + 8 + 16*dirChunks,
	}
	for _, cn := range x.cns {
		if s := cn.slc.Load(); s != nil {
			info.CacheBytes += s.bytes
		}
		info.CacheHits += cn.hits.Load()
		info.CacheLookups += cn.lookups.Load()
	}
	return info
}

// CopyCaches gives compute node to what compute node from's searches
// built (indexes.CacheCopier): its SLC, with the count of versions built
// that numbers the next one and the refresh, hit and lookup counts. A
// search changes nothing else of its compute node (the allocator, chunk
// and free list serve writers), draws no randomness and writes no memory,
// and an SLC is built from the search layer alone, so from's searches
// would have left to, which started as from did (a bulk load drops every
// SLC), the same. The SLC snapshot is shared: it is never written once
// built, and a refresh swaps in a new one.
func (x *Index) CopyCaches(srcIndex indexes.Index, from, to transport.NodeID) (bool, error) {
	s, ok := srcIndex.(*Index)
	if !ok {
		return false, nil
	}
	src, dst := s.cn(from), x.cn(to)
	dst.slc.Store(src.slc.Load())
	dst.versions.Store(src.versions.Load())
	dst.refreshes.Store(src.refreshes.Load())
	dst.hits.Store(src.hits.Load())
	dst.lookups.Store(src.lookups.Load())
	return true, nil
}

// NewClient makes a client for one coroutine.
func (x *Index) NewClient(ep transport.Endpoint) indexes.Client {
	return indexes.Checked("rftree", x.l.keySize, x.l.valSize, x.newClient(ep))
}

// newClient is NewClient's core, which the tests drive directly.
func (x *Index) newClient(ep transport.Endpoint) *client {
	n := x.l.nodeBytes
	return &client{
		x: x, ep: ep, cn: x.cn(ep.Node()), tag: threadTag(ep),
		buf: make([]byte, n), aux: make([]byte, n), sib: make([]byte, n), par: make([]byte, n),
	}
}

// threadTag is the non-zero holder tag a client writes into lock words.
func threadTag(ep transport.Endpoint) uint64 {
	return (uint64(ep.Node())<<8|uint64(ep.Thread()&0xff))%holderMask + 1
}
