package indexes

import (
	"errors"
	"iter"
	"slices"

	"github.com/dmbench/dmbench/indexes/combine"
	"github.com/dmbench/dmbench/transport"
)

// Index is one instance of an index over a fabric.
type Index interface {
	// NewClient makes a client for one coroutine. Clients of one compute
	// node may share that node's cache and locks through the Index.
	NewClient(ep transport.Endpoint) Client
	// BulkLoad loads kvs, given in increasing key order, into an empty
	// index through a setup endpoint (outside simulated time).
	BulkLoad(ep transport.Endpoint, kvs iter.Seq2[[]byte, []byte]) error
	// Info describes the instance: parameters and footprint.
	Info() Info
}

// Client performs operations for one coroutine. Keys and values are
// fixed-size byte strings (Env.KeySize, Env.ValueSize); keys compare as
// big-endian byte strings. Slices passed in may be reused by the caller
// once the call returns; slices returned are the caller's to keep.
type Client interface {
	Search(key []byte) (val []byte, found bool, err error)
	// Insert adds key; if key is already present its value is replaced.
	Insert(key, val []byte) error
	// Update replaces the value of key; ErrNotFound if absent.
	Update(key, val []byte) error
	// Delete removes key; ErrNotFound if absent.
	Delete(key []byte) error
	// Scan calls fn on up to n entries with keys >= start in key order,
	// stopping early when fn returns false.
	Scan(start []byte, n int, fn func(key, val []byte) bool) error
}

// ErrNotFound is returned by Update and Delete of an absent key.
var ErrNotFound = errors.New("key not found")

// Info describes an index instance for a run's result.
type Info struct {
	Name  string
	Paper string
	// Params are the effective parameters, defaults included.
	Params Params
	// CacheBytes is the compute-side cache in use, summed over compute
	// nodes; MemoryBytes the memory-side bytes the index occupies.
	CacheBytes  uint64
	MemoryBytes uint64
	// CacheHits and CacheLookups count compute-side cache accesses since
	// the index was built (both 0 for an index without a cache).
	CacheHits    uint64
	CacheLookups uint64
}

// Env is what an index is built in: the fabric and the shape of the data.
type Env struct {
	Fabric    transport.Fabric
	KeySize   int
	ValueSize int
	// CacheBytes is the compute-side cache budget per compute node.
	CacheBytes uint64
	// Partitions, when not nil, are the lower bounds of the key ranges
	// owned by the first len(Partitions) compute nodes in order (the
	// first is the zero key): the workload's partitionedkeys option,
	// which DEX and the P-variants of Sherman and SMART exploit. Compute
	// nodes beyond them are spares: they own no keys until a
	// Repartitioner hands them some.
	Partitions [][]byte
	// Records is how many records the run loads, by bulk load or by
	// inserts, before it measures; 0 if unknown. An index whose paper
	// fixes a structure for the paper's data set scales it by this (DEX's
	// subtree level M).
	Records uint64
	// Attach says the index already exists on the memory nodes: another
	// compute node built it (and maybe loaded it) and published it ready
	// in the superblock (Claim, Publish). New then opens it from what is
	// in memory (its roots in the meta area) and lays nothing out again;
	// the two instances share no Go object, as when the compute nodes are
	// processes of their own (dmbench computenode, go-ycsb's run after its
	// load). The conformance suite's Split case checks it.
	Attach bool
	// Compute lists the compute nodes this instance serves, when it does
	// not serve them all (nil): their clients call NewClient on it and it
	// registers their RPC handlers, while the other compute nodes run
	// instances of their own, in other processes. An index keeps Go
	// state, caches and handlers for these nodes only.
	Compute []transport.NodeID
}

// Serves reports whether the instance built in env serves compute node n.
func (env Env) Serves(n transport.NodeID) bool {
	return env.Compute == nil || slices.Contains(env.Compute, n)
}

// Combiner is an index whose compute nodes serve concurrent operations on
// one key together (read delegation, write combining: package combine).
// CombiningSizes reports the rounds since the index was built, summed
// over compute nodes; a run reports those of its measured phase.
type Combiner interface {
	CombiningSizes() (reads, writes combine.Sizes)
}

// Uncached is an index whose compute nodes keep nothing between
// operations: no cache, nothing learned from what they read. A search then
// leaves the index as it was, and a warm-up that only searches outside
// virtual time (every record on every compute node, DMTree's section 5.1)
// changes no result: the runner skips it, for the ideal index 7 of a
// default-scale point's 8 seconds of simulator time.
type Uncached interface {
	// Uncached reports whether the index, as configured, is uncached.
	Uncached() bool
}

// CacheCopier is an index that can give one compute node what another
// learned by searching: after compute node from of src searched every
// loaded record outside virtual time (the per-node warm-up, DMTree section
// 5.1), CopyCaches(src, from, to) leaves this index's compute node to as
// the same searches would have left it, its caches and counters included.
// It holds when a search changes only its own compute node's state and
// the nodes started alike (the bulk load, through compute node 0, left no
// compute-side state a search depends on). src is this index, or another
// instance of the same index and configuration, up to its client threads,
// whose bulk load left the same memory (bench.Warm checks that): the
// runner searches on one compute node and copies it to the others, for a
// sixth of the simulator time on DMTree's cluster, and the runs of a
// sweep that load alike copy from the first. CopyCaches reads src and
// never changes it. It reports false and changes nothing when, as
// configured, the copy would not be exact: the runner then searches on
// that node too. An error leaves to in no known state and ends the run.
type CacheCopier interface {
	CopyCaches(src Index, from, to transport.NodeID) (copied bool, err error)
}

// Repartitioner is an index whose compute nodes own logical key
// partitions that can move between them while clients run (DEX section 4,
// Figure 10): routing changes, data stays where it is.
type Repartitioner interface {
	// Repartition moves the upper part of compute node from's partition,
	// the keys at or above split, to compute node to (both are positions
	// in the fabric's compute-node list; to is typically a spare). It runs
	// on ep, a thread of compute node from, and returns once to serves
	// the moved keys. The index may move split to a boundary it can
	// honour (DEX: a leaf's fence key); it returns the first key moved.
	Repartition(ep transport.Endpoint, from, to int, split []byte) (bound []byte, err error)
}
