package indextest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/local"
	"github.com/dmbench/dmbench/transport/sim"
	"github.com/dmbench/dmbench/transport/tcp"
)

// The fabrics the suite runs on: the deterministic virtual-time simulator
// (on the ConnectX-6 profile) and the real-time in-process fabric.
const (
	Sim   = "sim"
	Local = "local"
)

// TCP is the tcp fabric with its servers on loopback. The suite runs on
// it only when a Suite names it in Fabrics: transport/tcp's tests do, for
// a few indexes, so that every index's tests do not pay for it.
const TCP = "tcp"

// Fabrics lists the fabrics the suite runs on, in the order it runs them.
func Fabrics() []string { return []string{Sim, Local} }

// The suite's cluster: small enough that every case runs in a second or
// two under the race detector on two cores, big enough that compute nodes
// contend with each other and that both memory nodes hold index nodes.
const (
	MemoryNodes  = 2
	ComputeNodes = 3
	// Threads per compute node and Coroutines (clients) per thread.
	Threads    = 2
	Coroutines = 2
	// MemoryBytes is each memory node's main region. Regions are mapped
	// lazily on both fabrics, so only the pages an index touches cost
	// memory; 64 MiB leaves room for an 8 MiB allocator chunk per
	// compute node on each memory node.
	MemoryBytes = 64 << 20
	// ComputeBytes is each compute node's main region, for indexes that
	// keep state on compute nodes (DMTree's fingerprint tables and locks).
	ComputeBytes = 16 << 20
	// DeviceBytes is the on-chip region of each memory node: 256 KiB, as
	// Sherman uses for its locks.
	DeviceBytes = 256 << 10
	// DefaultCacheBytes is the compute-side cache budget per compute node:
	// it holds the upper levels of every tree the suite builds.
	DefaultCacheBytes = 4 << 20
)

// RunTimeout bounds one Run of a case's clients in wall time. Every case
// finishes in seconds; a Run still going after RunTimeout is a deadlock or
// a livelock (the simulator detects only the deadlocks where every client
// is parked).
const RunTimeout = 2 * time.Minute

// Config is the suite's cluster in memory mode mode: MemoryNodes memory
// nodes (ids first, 2 RPC cores each) and ComputeNodes compute nodes of
// Threads threads (1 RPC core each), all randomness seeded by seed.
func Config(mode transport.Mode, seed uint64) transport.Config {
	return transport.Config{
		ComputeNodes: ComputeNodes,
		MemoryNodes:  MemoryNodes,
		Threads:      Threads,
		MemoryCores:  2,
		ComputeCores: 1,
		MemoryBytes:  MemoryBytes,
		ComputeBytes: ComputeBytes,
		DeviceBytes:  DeviceBytes,
		Mode:         mode,
		Seed:         seed,
	}
}

// NewFabric builds the fabric named fabric (Sim, Local or TCP) for cfg and
// closes it when t ends.
func NewFabric(t testing.TB, fabric string, cfg transport.Config) transport.Fabric {
	t.Helper()
	var (
		f   transport.Fabric
		err error
	)
	switch fabric {
	case Sim:
		f, err = sim.New(cfg, sim.CX6)
	case Local:
		f, err = local.New(cfg)
	case TCP:
		f, err = tcp.New(cfg, tcp.Options{})
	default:
		err = fmt.Errorf("fabric %q is not one of: %s, %s, %s", fabric, Sim, Local, TCP)
	}
	if err != nil {
		t.Fatalf("indextest: building the %s fabric: %v", fabric, err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Errorf("indextest: closing the %s fabric: %v", fabric, err)
		}
	})
	return f
}

// SimFabric builds a simulated fabric of cfg on the hardware profile
// prof and closes it when t ends: the fabric of golden verb tests, which
// read its counters and drive its clients directly.
func SimFabric(t testing.TB, cfg transport.Config, prof sim.Profile) *sim.Fabric {
	t.Helper()
	f, err := sim.New(cfg, prof)
	if err != nil {
		t.Fatalf("indextest: building the sim fabric: %v", err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Errorf("indextest: closing the sim fabric: %v", err)
		}
	})
	return f
}

// Build builds the registered index name in env with params, failing t
// if it cannot.
func Build(t testing.TB, name string, env indexes.Env, params map[string]string) indexes.Index {
	t.Helper()
	spec, err := indexes.Lookup(name)
	if err != nil {
		t.Fatalf("indextest: %v", err)
	}
	idx, err := spec.Build(env, params)
	if err != nil {
		t.Fatalf("indextest: building %s with %v: %v", name, params, err)
	}
	return idx
}

// Options shape an Instance. Zero fields take the suite's defaults.
type Options struct {
	// Fabric is Sim or Local; "" means Sim.
	Fabric string
	// Config is the cluster; the zero Config means
	// Config(transport.ModePaper, 1).
	Config transport.Config
	// KeySize and ValueSize are the fixed key and value sizes in bytes;
	// 0 means 8. Key and Value need at least 8.
	KeySize, ValueSize int
	// CacheBytes is the cache budget per compute node; 0 means
	// DefaultCacheBytes.
	CacheBytes uint64
	// Partitioned gives the index Env.Partitions: the key space cut into
	// equal ranges by the first eight bytes, one per compute node in
	// order (Partitions).
	Partitioned bool
	// Split gives every compute node an index instance of its own, as
	// when compute nodes are processes: the first compute node claims the
	// superblock and builds (and loads) the index; the others attach
	// (indexes.Env.Attach) when the first clients start, after the load,
	// and share no Go object with it.
	Split bool
}

// Partitions are the lower bounds of n equal key ranges of size-byte keys,
// cut by their first eight bytes; the first is the zero key.
func Partitions(n, size int) [][]byte {
	bounds := make([][]byte, n)
	for i := range bounds {
		bounds[i] = make([]byte, size)
		binary.BigEndian.PutUint64(bounds[i], uint64(i)*(^uint64(0)/uint64(n)+1))
	}
	return bounds
}

// Instance is an index built on a fresh fabric: what every case starts
// from, and what an index's own tests can start from too.
type Instance struct {
	Spec   indexes.Spec
	Params indexes.Params
	Env    indexes.Env
	Fabric transport.Fabric
	// Index is the instance built first, on the first compute node: the
	// only one unless the Instance is split.
	Index indexes.Index
	// split holds, in a split Instance, every compute node's instance in
	// the order of ComputeNodes once they have attached (nil before).
	split    []indexes.Index
	splitRun bool
	// clock stamps operations on real fabrics (see Stamp).
	clock atomic.Int64
}

// New builds the registered index named index with raw parameters params
// on a new fabric shaped by o, failing t if it cannot. The caller imports
// the index's package so that it registers itself. The fabric is closed
// when t ends.
func New(t testing.TB, index string, params map[string]string, o Options) *Instance {
	t.Helper()
	spec, err := indexes.Lookup(index)
	if err != nil {
		t.Fatalf("indextest: %v", err)
	}
	p, err := spec.Resolve(params)
	if err != nil {
		t.Fatalf("indextest: %v", err)
	}
	if o.Fabric == "" {
		o.Fabric = Sim
	}
	if o.Config == (transport.Config{}) {
		o.Config = Config(transport.ModePaper, 1)
	}
	if o.KeySize == 0 {
		o.KeySize = 8
	}
	if o.ValueSize == 0 {
		o.ValueSize = 8
	}
	if o.CacheBytes == 0 {
		o.CacheBytes = DefaultCacheBytes
	}
	f := NewFabric(t, o.Fabric, o.Config)
	env := indexes.Env{Fabric: f, KeySize: o.KeySize, ValueSize: o.ValueSize, CacheBytes: o.CacheBytes}
	if o.Partitioned {
		env.Partitions = Partitions(len(o.Config.ComputeNodeIDs()), o.KeySize)
	}
	if o.Split {
		env.Compute = o.Config.ComputeNodeIDs()[:1]
		won, err := indexes.Claim(f.Setup(o.Config.ComputeNodeIDs()[0]), f)
		if err != nil || !won {
			t.Fatalf("indextest: the first compute node claiming the superblock of a fresh fabric: won %v, error %v", won, err)
		}
	}
	idx, err := spec.Build(env, params)
	if err != nil {
		t.Fatalf("indextest: building %s on %s: %v", index, o.Fabric, err)
	}
	return &Instance{Spec: spec, Params: p, Env: env, Fabric: f, Index: idx, splitRun: o.Split}
}

// attach, in a split Instance, publishes the index the first compute node
// built and loaded and attaches every other compute node's instance to it,
// once: what a cluster of compute-node processes does when the loader is
// done.
func (in *Instance) attach(t testing.TB) {
	t.Helper()
	if !in.splitRun || in.split != nil {
		return
	}
	nodes := in.ComputeNodes()
	if err := indexes.Publish(in.Fabric.Setup(nodes[0]), in.Fabric); err != nil {
		t.Fatalf("indextest: %v", err)
	}
	env := in.Env
	env.Attach = true
	in.split = []indexes.Index{in.Index}
	for _, n := range nodes[1:] {
		if won, err := indexes.Claim(in.Fabric.Setup(n), in.Fabric); err != nil || won {
			t.Fatalf("indextest: compute node %d claiming a published superblock: won %v, error %v", n, won, err)
		}
		env.Compute = []transport.NodeID{n}
		idx, err := in.Spec.Build(env, in.Params)
		if err != nil {
			t.Fatalf("indextest: attaching compute node %d to %s on %s: %v", n, in.Spec.Name, in.Fabric.Name(), err)
		}
		in.split = append(in.split, idx)
	}
}

// index is the instance compute node n's clients use.
func (in *Instance) index(n transport.NodeID) indexes.Index {
	if in.split == nil {
		return in.Index
	}
	return in.split[slices.Index(in.ComputeNodes(), n)]
}

// Owner is the compute node whose partition holds key, and false when the
// instance has no partitions.
func (in *Instance) Owner(key []byte) (transport.NodeID, bool) {
	bounds := in.Env.Partitions
	if len(bounds) == 0 {
		return 0, false
	}
	i := sort.Search(len(bounds), func(i int) bool { return bytes.Compare(bounds[i], key) > 0 }) - 1
	return in.ComputeNodes()[i], true
}

// ComputeNodes lists the cluster's compute nodes.
func (in *Instance) ComputeNodes() []transport.NodeID {
	return in.Fabric.Config().ComputeNodeIDs()
}

// Load bulk-loads keys (strictly increasing) with their values through a
// Setup endpoint of the first compute node, the node a loader would run
// on, failing t if BulkLoad fails.
func (in *Instance) Load(t testing.TB, keys, vals [][]byte) {
	t.Helper()
	if in.split != nil {
		t.Fatalf("indextest: Load after the compute nodes of a split instance attached: load first")
	}
	if len(keys) != len(vals) {
		t.Fatalf("indextest: Load of %d keys with %d values", len(keys), len(vals))
	}
	for i := 1; i < len(keys); i++ {
		if bytes.Compare(keys[i-1], keys[i]) >= 0 {
			t.Fatalf("indextest: Load keys not strictly increasing at %d: %x then %x", i, keys[i-1], keys[i])
		}
	}
	ep := in.Fabric.Setup(in.ComputeNodes()[0])
	err := in.Index.BulkLoad(ep, func(yield func([]byte, []byte) bool) {
		for i := range keys {
			if !yield(keys[i], vals[i]) {
				return
			}
		}
	})
	if err != nil {
		t.Fatalf("indextest: bulk load of %d keys: %v", len(keys), err)
	}
}

// Worker names one client of a run. ID numbers the workers of one GoAll
// call densely from 0, in the order they were added.
type Worker struct {
	ID        int
	Node      transport.NodeID
	Thread    int
	Coroutine int
}

func (w Worker) String() string {
	return fmt.Sprintf("worker %d (node %d thread %d coroutine %d)", w.ID, w.Node, w.Thread, w.Coroutine)
}

// GoAll adds Coroutines clients on every thread of each compute node in
// nodes, each running body with a client of the index made on its
// endpoint, and returns how many it added. The endpoint stops a client
// that loops forever (SimClientLimit, LocalClientLimit) with a panic.
// Bodies must report failures with t.Errorf, never t.Fatal: they run on
// goroutines (local) or coroutines (sim) other than the test's.
func (in *Instance) GoAll(nodes []transport.NodeID, body func(w Worker, ep transport.Endpoint, c indexes.Client)) int {
	id, sim := 0, in.Fabric.Name() == Sim
	for _, n := range nodes {
		for th := range in.Fabric.Config().Threads {
			for co := range Coroutines {
				w := Worker{ID: id, Node: n, Thread: th, Coroutine: co}
				in.Fabric.Go(n, th, func(ep transport.Endpoint) {
					g := newGuard(ep, sim)
					body(w, g, in.index(n).NewClient(g))
				})
				id++
			}
		}
	}
	return id
}

// Workers is how many clients GoAll adds on nodes.
func (in *Instance) Workers(nodes []transport.NodeID) int {
	return len(nodes) * in.Fabric.Config().Threads * Coroutines
}

// Run runs the clients added since the last Run and fails t if one
// panics or the fabric reports a deadlock. If they are still running after
// RunTimeout, Run panics with every goroutine's stack: the clients cannot
// be stopped, and closing the fabric under them would crash less clearly.
func (in *Instance) Run(t testing.TB) {
	t.Helper()
	in.attach(t)
	done := make(chan error, 1)
	go func() { done <- in.Fabric.Run() }()
	timer := time.NewTimer(RunTimeout)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("indextest: %s on %s: run failed: %v", in.Spec.Name, in.Fabric.Name(), err)
		}
	case <-timer.C:
		stacks := make([]byte, 4<<20)
		stacks = stacks[:runtime.Stack(stacks, true)]
		panic(fmt.Sprintf("indextest: %s: %s on %s: clients still running after %v: a deadlock or livelock\n%s",
			t.Name(), in.Spec.Name, in.Fabric.Name(), RunTimeout, stacks))
	}
}

// Stamp is a time for ordering operations across clients: taken at an
// operation's call and at its return, stamps give every operation an
// interval, and an operation whose return stamp is below another's call
// stamp finished before the other started. On the simulator it is the
// virtual time in ns, and equal stamps mean the order is unknown. On real
// fabrics it is a counter shared by all clients of the instance: taking a
// stamp is one atomic increment, so stamps never tie and are ordered as
// the clients took them in real time, which clock reads of different
// goroutines do not promise at nanosecond grain.
func (in *Instance) Stamp(ep transport.Endpoint) int64 {
	if in.Fabric.Name() == Sim {
		return ep.Now()
	}
	return in.clock.Add(1)
}

// EventHash is the simulator's hash of every event so far, and false on
// other fabrics.
func (in *Instance) EventHash() (uint64, bool) {
	if f, ok := in.Fabric.(*sim.Fabric); ok {
		return f.EventHash(), true
	}
	return 0, false
}

// stripe deals items to n lists round-robin.
func stripe[T any](items []T, n int) [][]T {
	out := make([][]T, n)
	for i, it := range items {
		out[i%n] = append(out[i%n], it)
	}
	return out
}
