package indextest

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

// Run runs the conformance suite on the registered index named index with
// raw parameters params and the suite's default cluster. The caller
// imports the index's package so that it registers itself:
//
//	func TestConformance(t *testing.T) { indextest.Run(t, "sherman", nil) }
func Run(t *testing.T, index string, params map[string]string) {
	Suite{Index: index, Params: params}.Run(t)
}

// Suite is the conformance suite for one index configuration. Zero fields
// take the suite's defaults; an index that needs more memory than the
// defaults give says so here rather than the suite growing for everyone.
type Suite struct {
	Index  string
	Params map[string]string
	// MemoryBytes and ComputeBytes size each memory and compute node's
	// main region (0: the package constants of the same names).
	MemoryBytes, ComputeBytes uint64
	// CacheBytes is the cache budget per compute node (0:
	// DefaultCacheBytes).
	CacheBytes uint64
	// Fabrics are the fabrics to run on (nil: Fabrics()).
	Fabrics []string
}

// Run runs every case on every fabric in both memory modes, as subtests
// named fabric/mode/case. Under the race detector it skips sim, which
// costs half the time there and cannot race: run the suite both with and
// without -race, as make test does.
func (s Suite) Run(t *testing.T) {
	spec, err := indexes.Lookup(s.Index)
	if err != nil {
		t.Fatalf("indextest: %v", err)
	}
	params, err := spec.Resolve(s.Params)
	if err != nil {
		t.Fatalf("indextest: %v", err)
	}
	reason := ""
	if spec.PaperMode != nil {
		reason = spec.PaperMode(params)
	}
	name := spec.Name
	if len(params) > 0 {
		name = fmt.Sprintf("%s %v", name, params.Sorted())
	}
	partitioned := spec.Partitioned != nil && spec.Partitioned(params)
	if partitioned {
		t.Logf("%s partitions the key space among compute nodes: each key is written only by clients of its owner", name)
	}
	if reason != "" {
		t.Logf("%s relies on paper mode: %s; in strict mode its consistency violations are logged, not failed", name, reason)
	} else {
		t.Logf("%s does not rely on paper mode: strict mode is checked like paper mode", name)
	}
	fabrics := s.Fabrics
	if fabrics == nil {
		fabrics = Fabrics()
	}
	for _, fabric := range fabrics {
		t.Run(fabric, func(t *testing.T) {
			if raceEnabled && fabric == Sim {
				t.Skip("sim is skipped under the race detector, which can find nothing there: its clients run one at a time and hand over through coroutine switches; it runs without -race")
			}
			for _, mode := range []transport.Mode{transport.ModePaper, transport.ModeStrict} {
				t.Run(mode.String(), func(t *testing.T) {
					t.Parallel()
					c := &combo{suite: s, fabric: fabric, mode: mode, partitioned: partitioned}
					if mode == transport.ModeStrict {
						c.tolerate = reason
					}
					for _, tc := range cases {
						if tc.simOnly && fabric != Sim || tc.paperOnly && mode != transport.ModePaper {
							continue
						}
						t.Run(tc.name, func(t *testing.T) { tc.run(t, c) })
					}
				})
			}
		})
	}
}

// cases are the suite's cases; doc.go says what each checks.
var cases = []struct {
	name      string
	run       func(*testing.T, *combo)
	simOnly   bool
	paperOnly bool
}{
	{name: "Sequential", run: testSequential},
	{name: "BulkLoad", run: testBulkLoad},
	{name: "Linearizable", run: testLinearizable},
	{name: "ScansAcrossSplits", run: testScansAcrossSplits},
	{name: "StaleCaches", run: testStaleCaches},
	{name: "Deletes", run: testDeletes},
	{name: "Deterministic", run: testDeterministic, simOnly: true},
	{name: "Split", run: testSplit, paperOnly: true},
}

// combo is one fabric and memory mode of a suite.
type combo struct {
	suite  Suite
	fabric string
	mode   transport.Mode
	// tolerate is the index's PaperMode reason when this combination
	// only logs consistency violations.
	tolerate string
	// partitioned is the index's Partitioned for its parameters: keys
	// are written only by their owners.
	partitioned bool
	// split gives every compute node an index instance of its own
	// (Options.Split).
	split bool
}

// instance builds the index for a case: seed seeds the fabric.
func (c *combo) instance(t testing.TB, seed uint64, ks, vs int) *Instance {
	t.Helper()
	cfg := Config(c.mode, seed)
	if c.suite.MemoryBytes > 0 {
		cfg.MemoryBytes = c.suite.MemoryBytes
	}
	if c.suite.ComputeBytes > 0 {
		cfg.ComputeBytes = c.suite.ComputeBytes
	}
	return New(t, c.suite.Index, c.suite.Params, Options{
		Fabric: c.fabric, Config: cfg, KeySize: ks, ValueSize: vs, CacheBytes: c.suite.CacheBytes,
		Partitioned: c.partitioned, Split: c.split,
	})
}

// fixture builds the index, model, reporter and randomness of a case:
// seed seeds both the fabric and the case's choices, so a case is the
// same operations every run, and on sim the same history.
func (c *combo) fixture(t testing.TB, seed uint64, ks, vs int) *fixture {
	t.Helper()
	return &fixture{
		Instance: c.instance(t, seed, ks, vs),
		rep:      newReporter(t, c.tolerate),
		p:        &planner{m: newModel(), ks: ks, vs: vs},
		rng:      rand.New(rand.NewPCG(seed, 0x1dc5)),
	}
}
