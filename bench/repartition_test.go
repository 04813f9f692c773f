package bench

import (
	"testing"

	_ "github.com/dmbench/dmbench/indexes/dex"
	"github.com/dmbench/dmbench/transport/sim"
)

// A scale-out mid-run: the spare's clients start once DEX has handed it
// keys, the change is recorded where it happened, and the run stays
// deterministic.
func TestRepartitionScalesOut(t *testing.T) {
	run := func() *Result {
		c := smallConfig(t, "dex-write-intensive", map[string]string{"partitionedkeys": "true", "recordcount": "20000", "operationcount": "400000", "warmupoperationcount": "4000"})
		c.Index, c.Profile = "dex", sim.CX5.Name
		c.ComputeNodes, c.MemoryNodes, c.MemoryCores, c.Threads, c.Coroutines = 4, 2, 2, 4, 1
		c.CacheBytes = 64 << 10
		c.MaxPhaseNs, c.TimelineNs = 600_000, 50_000
		c.Repartition = &Repartition{AtNs: 200_000, From: 1, Fraction: 0.5}
		res, err := Run(c)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a := run()
	if len(a.Changes) != 1 || a.Changes[0].StartNs < 200_000 || a.Changes[0].EndNs <= a.Changes[0].StartNs {
		t.Fatalf("changes %+v: want one repartitioning from 200 us on", a.Changes)
	}
	if len(a.Timeline) != 12 {
		t.Errorf("%d timeline windows, want 12 of 50 us up to the 600 us cap", len(a.Timeline))
	}
	var spare *NodeResult
	for i := range a.Nodes {
		if a.Nodes[i].Role == "compute" {
			spare = &a.Nodes[i]
		}
	}
	if spare == nil || spare.ThreadUtil == 0 {
		t.Errorf("the spare compute node %+v never ran a client", spare)
	}
	if len(a.Failed) != 0 {
		t.Errorf("failed operations %v", a.Failed)
	}
	if b := run(); b.EventHash != a.EventHash {
		t.Errorf("event hash %s then %s: a repartitioned run is not deterministic", a.EventHash, b.EventHash)
	}
}
