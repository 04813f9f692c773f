package sherman

import (
	"errors"
	"fmt"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/internal/inner"
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
	// tree is the internal-node layer: the root pointer, index caches and
	// node allocation.
	tree        inner.Tree
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

	locks []lockTable       // by memory node
	local []*localLockTable // by compute node

	lockHostBytes uint64
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
	if err := x.tree.Init(f, &x.l.Layout, env.CacheBytes); err != nil {
		return nil, err
	}
	lockBytes := uint64(p.Int("lock_bytes")) &^ 7
	if x.locks, x.lockHostBytes, err = newLockTables(f, x.tree.SetupEP, x.tree.SetupMem, lockBytes, p.Bool("onchip")); err != nil {
		return nil, err
	}
	img := make([]byte, x.l.leafBytes)
	x.l.InitNode(img, 0, make([]byte, x.l.KeySize), nil, 0)
	x.l.setConsistent(img)
	if err := x.tree.InitRoot(img); err != nil {
		return nil, err
	}
	x.local = make([]*localLockTable, cfg.ComputeNodes)
	for i := range x.local {
		x.local[i] = newLocalLockTable(x.locks)
	}
	return x, nil
}

func (x *Index) localTable(n transport.NodeID) *localLockTable { return x.local[x.tree.CN(n)] }

// Info describes the instance.
func (x *Index) Info() indexes.Info {
	info := indexes.Info{
		Name: "sherman", Paper: paper, Params: x.effectiveParams(),
		MemoryBytes: x.tree.NodeBytes.Load() + x.lockHostBytes,
	}
	x.tree.CacheInfo(&info)
	return info
}

// CopyCaches gives compute node to the index cache and root that compute
// node from's searches built (indexes.CacheCopier; inner.Tree.CopyCache
// says why that is exact). Nothing else of a compute node changes when it
// searches: its lock tables serve writers. P-Sherman copies nothing: a
// search there depends on whose partition a node lies in, and a compute
// node searches only its own keys.
func (x *Index) CopyCaches(src indexes.Index, from, to transport.NodeID) (bool, error) {
	s, ok := src.(*Index)
	return ok && x.parts == nil && s.parts == nil && x.tree.CopyCache(&s.tree, from, to), nil
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
	return indexes.Checked("sherman", x.l.KeySize, x.l.valSize, x.newClient(ep))
}

// newClient is NewClient's core, which the tests drive directly.
func (x *Index) newClient(ep transport.Endpoint) *client {
	c := &client{x: x, tag: threadTag(ep)}
	c.Client.Init(&x.tree, ep, c, max(x.l.leafBytes, x.l.InnerBytes), stepCRC)
	return c
}
