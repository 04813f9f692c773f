package bench

import (
	"math"
	"strings"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	_ "github.com/dmbench/dmbench/indexes/ideal"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/workloads"
)

func smallConfig(t *testing.T, workload string, over workloads.Properties) Config {
	t.Helper()
	props := workloads.Properties{"recordcount": "20000", "operationcount": "20000"}
	for k, v := range over {
		props[k] = v
	}
	w, err := workloads.Builtin(workload, props)
	if err != nil {
		t.Fatal(err)
	}
	c := Default()
	c.ComputeNodes, c.Threads, c.Coroutines = 2, 4, 2
	c.Index, c.Workload = "ideal", w
	return c
}

// The Expected bound issues exactly one READ per search and two verbs per
// update, and the runner attributes them to the operation types.
func TestRunAttributesVerbs(t *testing.T) {
	c := smallConfig(t, "dmtree-ycsb-a", nil)
	res, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	if res.Ops != 20000 || res.ThroughputMops <= 0 {
		t.Fatalf("ops %d, throughput %v", res.Ops, res.ThroughputMops)
	}
	if got := res.VerbsPerOp["READ"]; got.Read != 1 || got.Total != 1 {
		t.Errorf("READ verbs per op %+v, want exactly 1 READ", got)
	}
	if got := res.VerbsPerOp["UPDATE"]; got.Read != 1 || got.Write != 1 || got.Total != 2 {
		t.Errorf("UPDATE verbs per op %+v, want 1 READ + 1 WRITE", got)
	}
	if len(res.Failed) != 0 {
		t.Errorf("failed operations %v, want none", res.Failed)
	}
	if l := res.Latency["READ"]; l.P50 < 1900 || l.P50 > 10000 {
		t.Errorf("READ p50 %d ns: want about one round trip", l.P50)
	}
}

func TestRunIsDeterministic(t *testing.T) {
	c := smallConfig(t, "dmtree-ycsb-a", nil)
	a, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	if a.EventHash != b.EventHash || a.ThroughputMops != b.ThroughputMops || a.Latency["READ"] != b.Latency["READ"] {
		t.Errorf("same config, different runs: %s %v vs %s %v", a.EventHash, a.ThroughputMops, b.EventHash, b.ThroughputMops)
	}
	w := *c.Workload
	w.Seed, c.Seed = 2, 2
	c.Workload = &w
	d, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	if d.EventHash == a.EventHash {
		t.Error("different seeds gave the same event hash")
	}
}

func TestRunOnLocal(t *testing.T) {
	c := smallConfig(t, "dmtree-ycsb-a", workloads.Properties{"operationcount": "4000"})
	c.Fabric = "local"
	res, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	if res.Ops != 4000 || res.EventHash != "" || math.IsNaN(res.ThroughputMops) {
		t.Errorf("local run: ops %d, hash %q, throughput %v", res.Ops, res.EventHash, res.ThroughputMops)
	}
}

func TestConfigErrorsNameTheInput(t *testing.T) {
	base := smallConfig(t, "dmtree-ycsb-a", nil)
	cases := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"fabric", func(c *Config) { c.Fabric = "rdma" }, `fabric "rdma" is not one of: sim, local`},
		{"profile", func(c *Config) { c.Profile = "cx7" }, `hardware profile "cx7" is not one of`},
		{"index", func(c *Config) { c.Index = "btree" }, `index "btree" is not one of`},
		{"param", func(c *Config) { c.Params = map[string]string{"span": "3"} }, `index ideal has no parameter "span"`},
		{"threads", func(c *Config) { c.Threads = 0 }, "threads = 0: need at least 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := base
			tc.edit(&c)
			_, err := Run(c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// nodeSearches wraps an index and counts the searches its clients make,
// per compute node.
type nodeSearches struct {
	indexes.Index
	n map[transport.NodeID]int
}

func (x *nodeSearches) NewClient(ep transport.Endpoint) indexes.Client {
	return searchCounter{x.Index.NewClient(ep), x, ep.Node()}
}

type searchCounter struct {
	indexes.Client
	x    *nodeSearches
	node transport.NodeID
}

func (c searchCounter) Search(key []byte) ([]byte, bool, error) {
	c.x.n[c.node]++
	return c.Client.Search(key)
}

// warmupSearches bulk-loads the configuration's records, runs its warm-up
// reads (readAll) with the index wrapped by wrap, and returns how many
// searches each compute node made.
func warmupSearches(t *testing.T, cfg Config, wrap func(*nodeSearches) indexes.Index) map[transport.NodeID]int {
	t.Helper()
	f, idx, err := Build(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	spy := &nodeSearches{Index: idx, n: map[transport.NodeID]int{}}
	r := &runner{cfg: cfg, f: f, idx: wrap(spy)}
	records, _ := cfg.Workload.Records()
	if err := idx.BulkLoad(f.Setup(f.Config().ComputeNodeIDs()[0]), records); err != nil {
		t.Fatal(err)
	}
	r.clients, _ = workloads.Cluster(cfg.ComputeNodes, cfg.Threads*cfg.Coroutines)
	if err := r.readAll(); err != nil {
		t.Fatal(err)
	}
	return spy.n
}

// warmupreadall=pernode has every compute node search every loaded record
// once before the run, as the DMTree artifact's benchmarks warm each
// server's cache; true searches each record once in the cluster.
func TestWarmupReadsEveryRecord(t *testing.T) {
	for _, c := range []struct {
		mode  string
		nodes int // how many times each record is searched: once per node, or once
	}{{"", 2}, {"true", 1}} {
		props := workloads.Properties{"recordcount": "5000", "operationcount": "1000"}
		if c.mode != "" {
			props["warmupreadall"] = c.mode
		}
		cfg := smallConfig(t, "dmtree-search-only", props)
		if c.mode == "" && cfg.Workload.WarmupReadAll != workloads.ReadAllPerNode {
			t.Fatalf("dmtree-search-only asks for warmupreadall=%s, want pernode (DMTree section 5.1 and its artifact)", cfg.Workload.WarmupReadAll)
		}
		searches := warmupSearches(t, cfg, func(x *nodeSearches) indexes.Index { return x })
		total := 0
		for n, k := range searches {
			total += k
			if c.nodes == 2 && k != 5000 {
				t.Errorf("warmupreadall=%s: compute node %d searched %d records, want all 5000", cfg.Workload.WarmupReadAll, n, k)
			}
		}
		if total != c.nodes*5000 {
			t.Errorf("warmupreadall=%s: %d searches on 2 compute nodes, want %d", cfg.Workload.WarmupReadAll, total, c.nodes*5000)
		}
	}
}

// uncachedSearches is nodeSearches for an index that caches nothing.
type uncachedSearches struct{ *nodeSearches }

func (uncachedSearches) Uncached() bool { return true }

// An index that keeps nothing on its compute nodes is not read per node:
// the searches, outside virtual time, would change nothing. Read once in
// the cluster, in virtual time, it still is: that warm-up takes time.
func TestUncachedSkipsPerNodeReads(t *testing.T) {
	for _, c := range []struct {
		mode     string
		searches int
	}{{"pernode", 0}, {"true", 5000}} {
		cfg := smallConfig(t, "dmtree-search-only", workloads.Properties{"recordcount": "5000", "operationcount": "1000", "warmupreadall": c.mode})
		total := 0
		for _, k := range warmupSearches(t, cfg, func(x *nodeSearches) indexes.Index { return uncachedSearches{x} }) {
			total += k
		}
		if total != c.searches {
			t.Errorf("warmupreadall=%s of an uncached index: %d searches, want %d", c.mode, total, c.searches)
		}
	}
}

// The timeline's windows hold every measured operation, and the time
// breakdown of an operation type adds up to its mean latency.
func TestTimelineAndBreakdown(t *testing.T) {
	c := smallConfig(t, "dmtree-ycsb-a", nil)
	c.TimelineNs = 200_000
	res, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	var ops int64
	for i, w := range res.Timeline {
		ops += w.Ops
		if w.StartNs != int64(i)*c.TimelineNs || w.Ops > 0 && w.Mops <= 0 {
			t.Errorf("window %d: %+v", i, w)
		}
	}
	if ops != res.Ops || len(res.Timeline) < 2 {
		t.Errorf("timeline of %d windows holds %d ops of %d", len(res.Timeline), ops, res.Ops)
	}
	for _, op := range []string{"READ", "UPDATE"} {
		var acts, steps float64
		for _, ns := range res.ActivityNsPerOp[op] {
			acts += ns
		}
		for _, ns := range res.StepsNsPerOp[op] {
			steps += ns
		}
		if mean := res.Latency[op].Mean; math.Abs(acts-mean) > 0.01*mean || math.Abs(steps-mean) > 0.01*mean {
			t.Errorf("%s: activities add up to %.0f ns, steps to %.0f, mean latency %.0f", op, acts, steps, mean)
		}
	}
	if res.ActivityNsPerOp["READ"]["read"] <= 0 || res.ActivityNsPerOp["READ"]["write"] != 0 {
		t.Errorf("READ breakdown %v: want READ time and no WRITE time", res.ActivityNsPerOp["READ"])
	}
}

// A repartitioning needs partitioned keys, a spare and an index that can
// hand keys over; each mistake is named.
func TestRepartitionConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(c *Config)
		props workloads.Properties
		want  string
	}{
		{"keys not partitioned", func(c *Config) { c.Repartition = &Repartition{AtNs: 1000, Fraction: 0.5} }, nil, "partitionedkeys=true"},
		{"no spare", func(c *Config) {
			c.ComputeNodes = 2
			c.Repartition = &Repartition{AtNs: 1000, From: 1, Fraction: 0.5}
		}, workloads.Properties{"partitionedkeys": "true"}, "choose one of 0-0"},
		{"fraction", func(c *Config) { c.Repartition = &Repartition{AtNs: 1000, Fraction: 1} }, workloads.Properties{"partitionedkeys": "true"}, "0 < fraction < 1"},
		{"index", func(c *Config) { c.Repartition = &Repartition{AtNs: 1000, Fraction: 0.5} }, workloads.Properties{"partitionedkeys": "true"}, "ideal cannot repartition"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := smallConfig(t, "dex-write-intensive", tc.props)
			tc.edit(&c)
			_, err := Run(c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}
