package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dmbench/dmbench/workloads"
)

// writeTrace writes n requests in the Twitter cache trace format over 53
// keys, cycling through reads, writes and deletes (53 keys against a
// cycle of 10 operations, so every key sees every operation).
func writeTrace(t *testing.T, n int) string {
	t.Helper()
	ops := []string{"get", "set", "get", "add", "gets", "incr", "delete", "get", "replace", "cas"}
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%d,ns:key%d,9,8,%d,%s,0\n", i/100, (i*7)%53, i%3, ops[i%len(ops)])
	}
	path := filepath.Join(t.TempDir(), "trace.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A trace replay runs every request of its measured lines, with the
// operation types the trace maps them to, and is deterministic.
func TestRunReplaysATrace(t *testing.T) {
	path := writeTrace(t, 3000)
	c := smallConfig(t, "dolphin-twitter-cluster8", workloads.Properties{
		"tracefile": path, "recordcount": "1000", "warmupoperationcount": "500", "operationcount": "1500"})
	a, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	if a.Ops != 1500 {
		t.Errorf("ran %d operations, want the 1500 measured lines", a.Ops)
	}
	for _, op := range []string{"READ", "UPDATE", "INSERT", "DELETE"} {
		if _, ok := a.Latency[op]; !ok {
			t.Errorf("no %s in the result: %v", op, a.Latency)
		}
	}
	row := a.CSVRow()
	if i := slices.Index(CSVHeader(), "delete_p50_ns"); i < 0 || row[i] == "" {
		t.Errorf("the CSV has no DELETE latency: column %d of %v", i, row)
	}
	b, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	if a.EventHash != b.EventHash || a.ThroughputMops != b.ThroughputMops {
		t.Errorf("same trace run twice: %s %v vs %s %v", a.EventHash, a.ThroughputMops, b.EventHash, b.ThroughputMops)
	}
	w := *c.Workload
	w.TraceFile = filepath.Join(t.TempDir(), "cluster8.0.zst")
	c.Workload = &w
	if _, err := Run(c); err == nil || !strings.Contains(err.Error(), "fetch cluster8.0.zst") {
		t.Errorf("run of a missing trace: error %v, want one naming the file to fetch", err)
	}
}
