package bench

import (
	"testing"

	_ "github.com/dmbench/dmbench/indexes/dmtree"
	"github.com/dmbench/dmbench/workloads"
)

// An index that combines reports the rounds of its measured phase: under
// Zipfian updates from many clients, writes of one key share rounds.
func TestRunReportsCombining(t *testing.T) {
	c := smallConfig(t, "dmtree-update-only", workloads.Properties{
		"recordcount": "2000", "operationcount": "4000", "warmupoperationcount": "1000", "requestdistribution": "zipfian"})
	c.Index, c.Threads, c.Coroutines = "dmtree", 8, 4
	res, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	w := res.Combining
	if w == nil {
		t.Fatal("no combining in the result of dmtree")
	}
	if w.Writes.Rounds == 0 || w.Writes.Ops != uint64(res.Ops) || w.Writes.Mean <= 1 || w.Writes.Max < w.Writes.P99 || w.Writes.P99 < w.Writes.P50 {
		t.Errorf("write rounds %+v over %d updates: want every update in a round, some shared", w.Writes, res.Ops)
	}
	ideal, err := Run(smallConfig(t, "dmtree-update-only", nil))
	if err != nil {
		t.Fatal(err)
	}
	if ideal.Combining != nil {
		t.Errorf("the ideal index reports combining %+v", ideal.Combining)
	}
}
