package experiments

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// traceSpec replays the cluster8 trace with the Expected bound.
const traceSpec = `
id: test/trace
paper: test
figure: Figure 0
title: Expected bound on a trace
section: "0"
plot: bars
profile: cx5-100g
cluster: {compute_nodes: 1, memory_nodes: 1, threads: 2, memory_cores: 1, coroutines: 1}
metric: throughput_mops
y_label: Throughput (Mops/s)
x: {name: workload, label: Workload, categories: [dolphin-twitter-cluster8]}
panels:
  - {name: twitter, title: Twitter}
series:
  - {label: Expected, index: ideal}
scales:
  small: {records: 200, ops: 300, warmup: 100}
  default: {records: 200, ops: 300, warmup: 100}
  large: {records: 200, ops: 300, warmup: 100}
claims:
  - {id: runs, section: "0", text: "the bound has a throughput", expect: above, value: 0.000001,
     lhs: {series: Expected, panel: twitter, category: dolphin-twitter-cluster8}}
`

// writeCluster8 writes a small plain-text stand-in named like the real
// file (the reader tells zstd from plain by content, not by name).
func writeCluster8(t *testing.T, dir string) {
	t.Helper()
	var b strings.Builder
	for i := range 1000 {
		op := "get"
		if i%2 == 1 {
			op = "set"
		}
		fmt.Fprintf(&b, "%d,k%d,3,8,1,%s,0\n", i/100, (i*13)%97, op)
	}
	if err := os.WriteFile(filepath.Join(dir, "cluster8.0.zst"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestTracePointsNeedInputUntilGiven(t *testing.T) {
	s, err := Parse("trace.yaml", []byte(traceSpec))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	opt := Options{Dir: out, Scale: "small", Jobs: 1}
	empty := t.TempDir()
	points, err := s.ExpandInputs("small", Inputs{TraceDir: empty})
	if err != nil {
		t.Fatal(err)
	}
	if len(points) != 1 || !strings.Contains(points[0].NeedsInput, "fetch cluster8.0.zst") {
		t.Fatalf("points %+v, want one that needs cluster8.0.zst", points)
	}
	outs, err := Sweep(context.Background(), s, points, opt)
	if err != nil {
		t.Fatal(err)
	}
	r := NewReport(s, "small", outs)
	if outs[0].Result != nil || r.Verdicts[0].Status != NeedsInput || len(r.Inputs) != 1 {
		t.Fatalf("without the trace: result %v, verdict %+v, inputs %v; want no run and %q", outs[0].Result, r.Verdicts[0], r.Inputs, NeedsInput)
	}
	if err := r.Write(out); err != nil {
		t.Fatal(err)
	}
	csv, err := os.ReadFile(Base(out, s) + ".csv")
	if err != nil || !strings.Contains(string(csv), "needs input: trace") {
		t.Errorf("runs CSV %q (%v), want the point's status", csv, err)
	}

	traces := t.TempDir()
	writeCluster8(t, traces)
	given, err := s.ExpandInputs("small", Inputs{TraceDir: traces})
	if err != nil {
		t.Fatal(err)
	}
	if given[0].NeedsInput != "" || given[0].Hash != points[0].Hash {
		t.Fatalf("with the trace: needs %q, hash %s (without: %s); want none and the same hash", given[0].NeedsInput, given[0].Hash, points[0].Hash)
	}
	outs, err = Sweep(context.Background(), s, given, opt)
	if err != nil {
		t.Fatal(err)
	}
	if r := NewReport(s, "small", outs); r.Verdicts[0].Status != Pass || outs[0].Result.Ops != 300 {
		t.Errorf("with the trace: verdict %+v, result %+v", r.Verdicts[0], outs[0].Result)
	}
	// The saved run counts later even where the trace is not at hand.
	again, err := Collect(s, points, opt)
	if err != nil {
		t.Fatal(err)
	}
	if r := NewReport(s, "small", again); again[0].Result == nil || r.Verdicts[0].Status != Pass || len(r.Inputs) != 0 {
		t.Errorf("saved run without the trace: verdict %+v, inputs %v", r.Verdicts[0], r.Inputs)
	}
}
