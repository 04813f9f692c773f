package bench

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
	"github.com/dmbench/dmbench/transport/verbs"
	"github.com/dmbench/dmbench/workloads"
)

// Fabrics the runner can build.
var Fabrics = []string{"sim", "local", "tcp", "verbs"}

// Config is one run: cluster shape, hardware, index, workload.
type Config struct {
	Fabric       string // "sim", "local", "tcp" or "verbs"
	Profile      string // sim hardware profile
	ComputeNodes int
	MemoryNodes  int
	Threads      int // client threads per compute node
	Coroutines   int // clients per thread
	MemoryCores  int // RPC cores per memory node
	ComputeCores int // RPC cores per compute node
	// MemoryBytes sizes each memory node's region; 0 sizes it from the
	// workload (memory is mapped lazily, so room costs nothing until used).
	MemoryBytes uint64
	// CacheBytes is the compute-side cache budget per compute node.
	CacheBytes uint64
	Mode       transport.Mode
	// Seed seeds the fabric (its endpoints' random sources, strict-mode
	// tearing); the workload's own seed property seeds the operation
	// streams. The CLI's --seed sets both.
	Seed     uint64
	Index    string
	Params   map[string]string
	Workload *workloads.Spec
	// MaxPhaseNs caps the measured phase (virtual ns on sim, wall ns on
	// local); 0 means run every operation.
	MaxPhaseNs int64
	// TimelineNs, when positive, records the measured phase's throughput
	// in windows of this many ns (Result.Timeline).
	TimelineNs int64
	// Repartition, when set, scales out mid-run (DEX Figure 10).
	Repartition *Repartition
	// MemNodes are the addresses of running memory-node servers (dmbench
	// memnode) for the tcp and verbs fabrics, and ClusterKey the key they
	// were started with; without them tcp serves its memory nodes
	// in-process (verbs needs them).
	MemNodes   []string
	ClusterKey []byte
	// Verbs chooses the RDMA device of the verbs fabric; nil takes the
	// first device's port 1, addressed by LID. A pointer, left out of the
	// JSON when nil, so that configurations of the other fabrics hash as
	// they did before the verbs fabric existed (saved runs stay valid).
	Verbs *verbs.HCAOptions `json:",omitempty"`
	// Process, when set, makes this process one compute node of a run
	// whose compute nodes are processes of their own (dmbench
	// computenode, tcp fabric). Left out of the JSON when nil, as Verbs.
	Process *Process `json:",omitempty"`

	// searchEveryNode, in tests, has every compute node of a per-node
	// warm-up search for itself, never copying another's caches
	// (indexes.CacheCopier): what the copy must equal.
	searchEveryNode bool
}

// Process is where a compute-node process meets the others of its run.
type Process struct {
	// Rendezvous is the host:port of the run's rendezvous (dmbench
	// memnode --rendezvous on the first memory node).
	Rendezvous string
	// Listen is where this compute node's server listens, reachable by
	// the other compute nodes.
	Listen string
	// Wait bounds every wait for the others: at the rendezvous's
	// exchanges and for the loader to publish the index.
	Wait time.Duration
}

// Repartition is a scale-out in the measured phase (DEX section 4,
// Figure 10). The last compute node starts as a spare: it owns no keys and
// its clients wait. AtNs into the phase, one thread of compute node From
// hands the spare the upper Fraction of From's key range through the
// index (indexes.Repartitioner); then From's clients draw keys from what
// it kept and the spare's clients start on the moved keys. It needs
// partitioned keys; the other compute nodes share the key space equally.
type Repartition struct {
	AtNs     int64
	From     int
	Fraction float64
}

// Default is the DMTree paper's cluster (section 5): 6 compute nodes x 72
// threads x 4 coroutines, 1 memory node with 1 core, ConnectX-6.
func Default() Config {
	return Config{
		Fabric: "sim", Profile: sim.CX6.Name,
		ComputeNodes: 6, MemoryNodes: 1, Threads: 72, Coroutines: 4,
		MemoryCores: 1, ComputeCores: 1,
		CacheBytes: 256 << 20, Seed: 1,
	}
}

// Validate reports every field that cannot make a run, each naming the
// field and what is accepted.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if !contains(Fabrics, c.Fabric) {
		bad("fabric %q is not one of: %s", c.Fabric, strings.Join(Fabrics, ", "))
	}
	if c.Fabric == "sim" {
		if _, err := sim.LookupProfile(c.Profile); err != nil {
			errs = append(errs, err)
		}
	}
	if len(c.MemNodes) > 0 && c.Fabric != "tcp" && c.Fabric != "verbs" {
		bad("memory-node addresses %v need the tcp or verbs fabric, not %s", c.MemNodes, c.Fabric)
	}
	if c.Process != nil && (c.Fabric != "tcp" || len(c.MemNodes) == 0) {
		bad("a compute node in a process of its own needs the tcp fabric and running memory nodes (--memnodes), not the %s fabric", c.Fabric)
	}
	if c.Process != nil && c.Repartition != nil {
		bad("repartitioning moves keys to a spare compute node in the same process: it cannot run with compute nodes in processes of their own")
	}
	if c.Fabric == "verbs" && len(c.MemNodes) == 0 {
		bad("the verbs fabric needs memory-node addresses: memory nodes started with dmbench memnode --verbs")
	}
	for _, f := range []struct {
		name string
		v    int
	}{
		{"compute nodes", c.ComputeNodes}, {"memory nodes", c.MemoryNodes}, {"threads", c.Threads},
		{"coroutines", c.Coroutines}, {"memory cores", c.MemoryCores}, {"compute cores", c.ComputeCores},
	} {
		if f.v < 1 {
			bad("%s = %d: need at least 1", f.name, f.v)
		}
	}
	if c.Index == "" {
		bad("no index given: choose one of %s", strings.Join(indexes.Names(), ", "))
	} else if s, err := indexes.Lookup(c.Index); err != nil {
		errs = append(errs, err)
	} else if _, err := s.Resolve(c.Params); err != nil {
		errs = append(errs, err)
	}
	if c.Workload == nil {
		bad("no workload given")
	} else if err := c.Workload.Validate(); err != nil {
		errs = append(errs, err)
	} else if msg := c.Workload.TraceMissing(); msg != "" {
		errs = append(errs, errors.New(msg))
	}
	if c.MaxPhaseNs < 0 {
		bad("measured-phase cap %d ns must not be negative", c.MaxPhaseNs)
	}
	if c.TimelineNs < 0 {
		bad("timeline window %d ns must not be negative", c.TimelineNs)
	}
	if p := c.Repartition; p != nil {
		if c.Workload != nil && !c.Workload.PartitionedKeys {
			bad("repartitioning moves partitioned keys: set the workload property %s=true", workloads.PropPartitionedKeys)
		}
		if c.ComputeNodes < 2 {
			bad("repartitioning needs at least 2 compute nodes (the last is the spare that receives keys), got %d", c.ComputeNodes)
		} else if p.From < 0 || p.From >= c.ComputeNodes-1 {
			bad("repartitioning from compute node %d: choose one of 0-%d (node %d is the spare)", p.From, c.ComputeNodes-2, c.ComputeNodes-1)
		}
		if !(p.Fraction > 0 && p.Fraction < 1) {
			bad("repartitioning fraction %g: need 0 < fraction < 1 of the node's key range", p.Fraction)
		}
		if p.AtNs <= 0 {
			bad("repartitioning at %d ns: need a positive time into the measured phase", p.AtNs)
		}
	}
	return errors.Join(errs...)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// memoryBytes sizes a memory node: generous room for the records and the
// inserts the run may make, spread over the memory nodes.
func (c *Config) memoryBytes() uint64 {
	if c.MemoryBytes > 0 {
		return c.MemoryBytes
	}
	w := c.Workload
	entries := uint64(w.RecordCount + w.OperationCount + w.WarmupOperationCount)
	per := uint64(w.KeySize+w.ValueSize()) * 32 // node slack, split copies, padding, caches' backing
	size := entries*per/uint64(c.MemoryNodes) + 256<<20
	return (size + 64<<20 - 1) / (64 << 20) * (64 << 20)
}

// cluster is the transport shape of the run.
func (c *Config) cluster() (transport.Config, error) {
	tc := transport.Config{
		ComputeNodes: c.ComputeNodes, MemoryNodes: c.MemoryNodes, Threads: c.Threads,
		MemoryCores: c.MemoryCores, ComputeCores: c.ComputeCores,
		MemoryBytes: c.memoryBytes(), Mode: c.Mode, Seed: c.Seed,
		DeviceBytes: sim.CX6.DeviceBytes,
	}
	if c.Fabric == "sim" {
		p, err := sim.LookupProfile(c.Profile)
		if err != nil {
			return tc, err
		}
		tc.DeviceBytes = p.DeviceBytes
	}
	return tc, tc.Validate()
}
