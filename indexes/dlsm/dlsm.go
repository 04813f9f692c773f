package dlsm

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

const paper = "dLSM (ICDE'23)"

// The artifact's defaults (ruihong123/dLSM, db/dbformat.h and
// include/TimberSaw/options.h).
const (
	artifactMemtable = 64 << 20 // write_buffer_size and max_file_size
	// artifactRecords is the data set the 64 MB memtable served in the
	// DMTree runs (one billion records): auto scales the memtable by
	// Env.Records against it.
	artifactRecords = 1_000_000_000
	minMemtable     = 8 << 10
	numLevels       = 6  // config::kNumLevels
	l0Compaction    = 1  // config::kL0_CompactionTrigger
	l0Slowdown      = 16 // config::kL0_SlowdownWritesTrigger
	l0Stop          = 32 // config::kL0_StopWritesTrigger
	// levelBaseTables is max_mega_bytes_for_level_base (256 MB) in 64 MB
	// tables: level 1 holds four memtables' worth.
	levelBaseTables = 4
	// slowdownNs is LevelDB's one-millisecond delay of a write while
	// level 0 is over the slowdown trigger.
	slowdownNs = 1_000_000
	// prefetchBytes is the sequential iterator's READ size
	// (table/byte_addressable_SEQ_iterrator.cpp).
	prefetchBytes = 6 << 10
)

func init() {
	indexes.Register(indexes.Spec{
		Name:    "dlsm",
		Paper:   paper,
		Summary: "LSM tree: compute-side memtables, SSTables in remote memory, compaction on the memory node's cores",
		Params: []indexes.Param{
			{Name: "memtable", Kind: indexes.KindInt, Default: "auto", Values: []string{"auto"}, Min: 1 << 10, Max: 1 << 30,
				Doc: "memtable (and SSTable) bytes; auto scales the artifact's 64 MB by the run's records against the DMTree runs' one billion (at least 8 KB, 16 KB when the record count is unknown)"},
			{Name: "ratio", Kind: indexes.KindInt, Default: "10", Min: 2, Max: 100,
				Doc: "level size ratio (LevelDB's 10); level 1 holds 4 memtables (256 MB over 64 MB)"},
			{Name: "immutables", Kind: indexes.KindInt, Default: "15", Min: 1, Max: 1024,
				Doc: "immutable memtables waiting for flush before writes stop (Immutable_StopWritesTrigger)"},
			{Name: "bloombits", Kind: indexes.KindInt, Default: "10", Min: 1, Max: 64,
				Doc: "bloom filter bits per key"},
		},
		Steps:   []string{"memtable", "sstable", "flush", "compaction", "stall", "forward"},
		Offload: compactionHandlers,
		New:     New,
	})
}

// Steps of an operation's time breakdown.
const (
	stepMemtable transport.Step = iota + 1
	stepSSTable
	stepFlush
	stepCompaction
	stepStall
	stepForward
)

// Index is a dLSM instance: one LSM tree per compute node, each over its
// own key range (physical sharding, as the artifact runs several compute
// nodes), with its SSTables on one memory node.
type Index struct {
	env    indexes.Env
	f      format
	params indexes.Params

	memBytes   int64
	ratio      int
	immutables int

	comps  []transport.NodeID
	mems   []transport.NodeID
	bounds [][]byte // bounds[i]: lowest key of shard i
	// shards[i] is shard i's LSM tree, nil in an attached instance for
	// the shards of compute nodes it does not serve (Env.Compute), which
	// their own instances hold.
	shards []*shard
	allocs map[transport.NodeID]*transport.Allocator
}

// New builds an empty dLSM, or with env.Attach opens the shards of the
// compute nodes the instance serves (see attach).
func New(env indexes.Env, p indexes.Params) (indexes.Index, error) {
	if env.KeySize <= 0 || env.ValueSize < 0 {
		return nil, fmt.Errorf("key size %d and value size %d: need a positive key size", env.KeySize, env.ValueSize)
	}
	cfg := env.Fabric.Config()
	x := &Index{env: env, f: newFormat(env.KeySize, env.ValueSize, p.Int("bloombits")), params: p,
		ratio: p.Int("ratio"), immutables: p.Int("immutables"),
		comps: cfg.ComputeNodeIDs(), mems: cfg.MemoryNodeIDs(), allocs: map[transport.NodeID]*transport.Allocator{}}
	if len(x.comps) == 0 || len(x.mems) == 0 {
		return nil, fmt.Errorf("need compute and memory nodes, have %d and %d", len(x.comps), len(x.mems))
	}
	x.memBytes = memtableBytes(p.String("memtable"), env.Records)
	x.bounds = shardBounds(env, len(x.comps))
	x.shards = make([]*shard, len(x.bounds))
	if env.Attach {
		if err := x.attach(); err != nil {
			return nil, err
		}
	} else {
		for i := range x.bounds {
			x.shards[i] = newShard(x, i, x.comps[i], x.mems[i%len(x.mems)])
		}
		if err := x.clearMeta(env.Fabric.Setup(x.comps[0])); err != nil {
			return nil, err
		}
	}
	for _, n := range x.comps {
		x.allocs[n] = transport.NewAllocator(env.Fabric, 0)
	}
	x.serve()
	return x, nil
}

// attach opens the shards of the compute nodes the instance serves
// (Env.Compute) from the manifests the bulk load left in memory; it then
// serves those nodes' clients and the RPCs forwarded to them.
func (x *Index) attach() error {
	for k := range x.bounds {
		n := x.comps[k]
		if !x.env.Serves(n) {
			continue
		}
		s := newShard(x, k, n, x.mems[k%len(x.mems)])
		if err := x.openManifest(x.env.Fabric.Setup(n), s); err != nil {
			return err
		}
		x.shards[k] = s
	}
	return nil
}

// memtableBytes resolves the memtable parameter.
func memtableBytes(v string, records uint64) int64 {
	if v != "auto" {
		n, _ := strconv.ParseInt(v, 10, 64) // validated by Resolve
		return n
	}
	if records == 0 {
		return 16 << 10
	}
	b := int64(float64(artifactMemtable) * float64(records) / artifactRecords)
	return min(artifactMemtable, max(minMemtable, b))
}

// shardBounds cuts the key space among the compute nodes: the workload's
// partitions when it has them, else equal ranges of the first eight key
// bytes.
func shardBounds(env indexes.Env, comps int) [][]byte {
	if len(env.Partitions) > 0 {
		out := make([][]byte, len(env.Partitions))
		for i, p := range env.Partitions {
			out[i] = bytes.Clone(p)
		}
		return out
	}
	out := make([][]byte, comps)
	step := ^uint64(0)/uint64(comps) + 1
	for i := range out {
		b := make([]byte, env.KeySize)
		var w [8]byte
		binary.BigEndian.PutUint64(w[:], uint64(i)*step)
		copy(b, w[:])
		out[i] = b
	}
	return out
}

// owner is the shard holding key.
func (x *Index) owner(key []byte) int {
	i := len(x.bounds) - 1
	for i > 0 && bytes.Compare(key, x.bounds[i]) < 0 {
		i--
	}
	return i
}

// Info describes the instance.
func (x *Index) Info() indexes.Info {
	info := indexes.Info{Name: "dlsm", Paper: paper, Params: indexes.Params{}}
	for k, v := range x.params {
		info.Params[k] = v
	}
	for _, s := range x.shards {
		if s == nil {
			continue
		}
		c, m := s.footprint()
		info.CacheBytes += c
		info.MemoryBytes += m
	}
	return info
}
