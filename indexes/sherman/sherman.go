package sherman

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

const paper = "Sherman: A Write-Optimized Distributed B+Tree Index on Disaggregated Memory (Wang, Lu, Shu; SIGMOD'22)"

// consistency is how a reader tells a torn or concurrently written node
// from a good one; each paper that measured Sherman ran a different one.
type consistency uint8

const (
	versions consistency = iota // Sherman's two-level versions (the original)
	optlock                     // DEX VLDB'24's RDMA optimistic lock
	crc                         // RF-tree (Appl. Sci.'23): a CRC per node
)

var consistencyNames = []string{"versions", "optlock", "crc"}

func (v consistency) String() string { return consistencyNames[v] }

func init() {
	indexes.Register(indexes.Spec{
		Name:    "sherman",
		Paper:   paper,
		Summary: "B+-tree of 1 KB nodes, cached internal nodes, on-chip hierarchical locks, write+unlock batching",
		Steps:   []string{"crc"},
		Params: []indexes.Param{
			{Name: "consistency", Kind: indexes.KindEnum, Default: "versions", Values: consistencyNames,
				Doc: "how reads detect concurrent writes: versions (Sherman's two-level versions), optlock (DEX's READ lock word, READ node, READ lock word), crc (RF-tree's CRC per node)"},
			{Name: "optcheck", Kind: indexes.KindEnum, Default: "equal", Values: []string{"equal", "dex"},
				Doc: "optlock's test of the lock words read around a node: equal (both equal and unlocked; linearizable) or dex (DEX's artifact: read again only if the version moved and the lock is held again, with node and entry versions; relies on paper mode)"},
			{Name: "partitioned", Kind: indexes.KindBool, Default: "false",
				Doc: "P-Sherman (DEX): nodes inside one compute node's key partition (Env.Partitions) are synchronised by that node's local locks, without RDMA atomics"},
			{Name: "hocl", Kind: indexes.KindBool, Default: "true",
				Doc: "hierarchical on-compute locks: a per-compute-node local lock before the global CAS, with hand-over"},
			{Name: "handover", Kind: indexes.KindInt, Default: "8", Min: 0, Max: 255,
				Doc: "holders in a row that may share one global lock acquisition through local hand-over (Sherman's kMaxHandOverTime)"},
			{Name: "onchip", Kind: indexes.KindBool, Default: "true",
				Doc: "keep the lock table in the memory nodes' on-chip device memory when the fabric has it"},
			{Name: "combine", Kind: indexes.KindBool, Default: "true",
				Doc: "post a node's WRITE and its unlock WRITE as one doorbell batch (Sherman's command combination)"},
			{Name: "scan", Kind: indexes.KindEnum, Default: "batch", Values: []string{"batch", "chain"},
				Doc: "how a scan reaches its leaves: batch (Sherman's range_query: the leaves its cached level-1 node lists, up to 32 READs in one doorbell batch) or chain (the DMTree artifact's copy: one READ at a time, following sibling pointers)"},
			{Name: "node_bytes", Kind: indexes.KindInt, Default: "1024", Min: 128, Max: 65536,
				Doc: "bytes per internal node, and per leaf unless span is set"},
			{Name: "span", Kind: indexes.KindInt, Default: "0", Min: 0, Max: 4096,
				Doc: "entries per leaf (the leaf grows to fit them); 0 fits as many as node_bytes holds"},
			{Name: "lock_bytes", Kind: indexes.KindInt, Default: "262144", Min: 8, Max: 1 << 30,
				Doc: "lock table bytes per memory node, 8 per lock (Sherman's kLockChipMemSize); capped by the device region"},
			{Name: "bulk_fill", Kind: indexes.KindFloat, Default: "0.75", Min: 0.05, Max: 1,
				Doc: "fraction of each node BulkLoad fills"},
		},
		PaperMode:   paperMode,
		Partitioned: func(p indexes.Params) bool { return p.Bool("partitioned") },
		New:         New,
	})
}

// paperMode says when a configuration relies on 64-byte cacheline
// atomicity and in-order landing of WRITEs (transport.ModePaper).
func paperMode(p indexes.Params) string {
	switch {
	case p.String("consistency") == "versions":
		return "the versions variant (Sherman's two-level versions) trusts a node's front/rear version bytes and each leaf entry's 4-bit front/rear versions to expose a torn READ, which holds only if a WRITE lands in increasing address order with whole cachelines"
	case p.String("consistency") == "optlock" && p.String("optcheck") == "dex":
		return "optcheck=dex (DEX's src/Tree.cpp page_search) accepts a node read while a writer held its lock, and so trusts the node's front/rear versions and each leaf entry's 4-bit versions to expose a torn READ, which holds only if a WRITE lands in increasing address order with whole cachelines"
	case p.String("consistency") == "optlock" && p.Bool("partitioned"):
		return "partitioned optlock checks the nodes of another compute node's partition (read by scans that run past their own) by their node and entry versions only, which holds only if a WRITE lands in increasing address order with whole cachelines"
	}
	return ""
}

// Index is a Sherman B+-tree on one fabric.
type Index struct {
	env         indexes.Env
	params      indexes.Params
	l           layout
	consistency consistency
	dexCheck    bool        // optlock's lock-word test is DEX's (optcheck=dex)
	parts       *partitions // nil unless partitioned
	hocl        bool
	handover    int
	combine     bool
	chainScan   bool // scans follow sibling pointers one READ at a time (scan=chain)
	fill        float64

	rootPtr  transport.GAddr // the root pointer word in memory node 0's meta area
	locks    []lockTable     // by memory node
	firstCN  transport.NodeID
	setupEP  transport.Endpoint
	setupMem *transport.Allocator

	// Per compute node (index: node id - firstCN).
	caches []*nodeCache
	local  []*localLockTable
	roots  []atomic.Pointer[rootInfo]
	allocs []*transport.Allocator

	nodeBytes     atomic.Uint64 // memory-side bytes of nodes allocated
	lockHostBytes uint64
}

// rootInfo is what a compute node believes the root is.
type rootInfo struct {
	addr  transport.GAddr
	level int
}

// New builds an empty Sherman tree: a root leaf published in memory node
// 0's meta area (unless one is there already) and the lock tables.
func New(env indexes.Env, p indexes.Params) (indexes.Index, error) {
	if env.Fabric == nil {
		return nil, errors.New("no fabric")
	}
	if env.KeySize <= 0 || env.ValueSize < 0 {
		return nil, fmt.Errorf("key size %d and value size %d: need a positive key size", env.KeySize, env.ValueSize)
	}
	l, err := newLayout(env.KeySize, env.ValueSize, p.Int("node_bytes"), p.Int("span"))
	if err != nil {
		return nil, err
	}
	f := env.Fabric
	cfg := f.Config()
	x := &Index{
		env: env, params: p, l: l,
		hocl:      p.Bool("hocl"),
		handover:  p.Int("handover"),
		combine:   p.Bool("combine"),
		chainScan: p.String("scan") == "chain",
		fill:      p.Float("bulk_fill"),
		firstCN:   transport.NodeID(cfg.MemoryNodes),
	}
	for i, name := range consistencyNames {
		if p.String("consistency") == name {
			x.consistency = consistency(i)
		}
	}
	if x.dexCheck = p.String("optcheck") == "dex"; x.dexCheck && x.consistency != optlock {
		return nil, fmt.Errorf("optcheck=dex with consistency=%v: optcheck applies to consistency=optlock only", x.consistency)
	}
	if p.Bool("partitioned") {
		if x.parts, err = newPartitions(env.Partitions, cfg.ComputeNodeIDs(), env.KeySize); err != nil {
			return nil, err
		}
	}
	setupNode := transport.NodeID(0)
	if cfg.ComputeNodes > 0 {
		setupNode = x.firstCN
	}
	x.setupEP = f.Setup(setupNode)
	x.setupMem = transport.NewAllocator(f, 0)
	lockBytes := uint64(p.Int("lock_bytes")) &^ 7
	if x.locks, x.lockHostBytes, err = newLockTables(f, x.setupEP, x.setupMem, lockBytes, p.Bool("onchip")); err != nil {
		return nil, err
	}
	main, err := f.Region(0, "main")
	if err != nil {
		return nil, fmt.Errorf("root pointer: %w", err)
	}
	x.rootPtr = main.Base.Add(metaRoot)
	if err := x.initRoot(); err != nil {
		return nil, err
	}
	n := cfg.ComputeNodes
	x.caches = make([]*nodeCache, n)
	x.local = make([]*localLockTable, n)
	x.roots = make([]atomic.Pointer[rootInfo], n)
	x.allocs = make([]*transport.Allocator, n)
	for i := range n {
		x.caches[i] = newNodeCache(&x.l, env.CacheBytes)
		x.local[i] = newLocalLockTable(x.locks)
		x.allocs[i] = transport.NewAllocator(f, 0)
	}
	return x, nil
}

// initRoot publishes an empty root leaf unless a root exists, so that a
// tree works without a bulk load (Sherman issue #26: its root broke
// without one).
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
	x.l.setConsistent(img)
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

// nodeAlign aligns nodes to cachelines, so that in paper memory mode a
// node's front version shares its first cacheline and its rear version
// its last.
const nodeAlign = transport.CachelineBytes

func (x *Index) cn(n transport.NodeID) int { return int(n - x.firstCN) }

func (x *Index) cache(n transport.NodeID) *nodeCache                 { return x.caches[x.cn(n)] }
func (x *Index) localTable(n transport.NodeID) *localLockTable       { return x.local[x.cn(n)] }
func (x *Index) rootOf(n transport.NodeID) *atomic.Pointer[rootInfo] { return &x.roots[x.cn(n)] }

// Info describes the instance.
func (x *Index) Info() indexes.Info {
	info := indexes.Info{
		Name: "sherman", Paper: paper, Params: x.effectiveParams(),
		MemoryBytes: x.nodeBytes.Load() + x.lockHostBytes,
	}
	for _, c := range x.caches {
		info.CacheBytes += c.bytes()
		info.CacheHits += c.hits.Load()
		info.CacheLookups += c.lookups.Load()
	}
	return info
}

// effectiveParams are the parameters as they took effect: lock_bytes
// capped by the device region, and onchip false on a fabric without one
// (its Config.DeviceBytes is 0).
func (x *Index) effectiveParams() indexes.Params {
	p := indexes.Params{}
	for k, v := range x.params {
		p[k] = v
	}
	p["lock_bytes"] = fmt.Sprint(x.locks[0].n * 8)
	p["onchip"] = fmt.Sprint(x.locks[0].device)
	return p
}

// NewClient makes a client for one coroutine.
func (x *Index) NewClient(ep transport.Endpoint) indexes.Client {
	return indexes.Checked("sherman", x.l.keySize, x.l.valSize, x.newClient(ep))
}

// newClient is NewClient's core, which the tests drive directly.
func (x *Index) newClient(ep transport.Endpoint) *client {
	size := max(x.l.leafBytes, x.l.innerBytes)
	return &client{
		x: x, ep: ep, tag: threadTag(ep),
		buf: make([]byte, size), aux: make([]byte, size), sib: make([]byte, size),
	}
}
