package tcp_test

import (
	"reflect"
	"testing"

	"github.com/dmbench/dmbench/bench"
	"github.com/dmbench/dmbench/workloads"
)

// TestVerbsPerOpMatchLocal runs the same single-client YCSB-A run of
// Sherman on the local and the tcp fabric: with no other client to race,
// every operation issues the same verbs, so verbs and bytes per operation
// must agree exactly. This is what lets dmbench compare put a tcp run
// beside a local or sim one.
func TestVerbsPerOpMatchLocal(t *testing.T) {
	results := make(map[string]*bench.Result)
	for _, fabric := range []string{"local", "tcp"} {
		w, err := workloads.Builtin("workloada", workloads.Properties{"recordcount": "2000", "operationcount": "2000"})
		if err != nil {
			t.Fatal(err)
		}
		c := bench.Default()
		c.Fabric, c.Index, c.Workload = fabric, "sherman", w
		c.ComputeNodes, c.MemoryNodes, c.Threads, c.Coroutines = 1, 2, 1, 1
		res, err := bench.Run(c)
		if err != nil {
			t.Fatalf("%s: %v", fabric, err)
		}
		results[fabric] = res
	}
	l, tc := results["local"], results["tcp"]
	if l.Ops != 2000 || tc.Ops != 2000 || len(tc.VerbsPerOp) < 2 {
		t.Fatalf("runs of %d and %d ops, verbs per op %v: want 2000 reads and updates each", l.Ops, tc.Ops, tc.VerbsPerOp)
	}
	if !reflect.DeepEqual(l.VerbsPerOp, tc.VerbsPerOp) {
		t.Errorf("verbs per operation: local %+v, tcp %+v", l.VerbsPerOp, tc.VerbsPerOp)
	}
	if !reflect.DeepEqual(l.BytesPerOp, tc.BytesPerOp) {
		t.Errorf("bytes per operation: local %+v, tcp %+v", l.BytesPerOp, tc.BytesPerOp)
	}
}
