package experiments

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/dmbench/dmbench/indexes/ideal"
)

// A tiny figure: the Expected bound against an index that does not exist.
const tinySpec = `
id: test/tiny
paper: test
figure: Figure 0
title: Expected bound vs threads
section: "0"
plot: lines
profile: cx6-100g
cluster: {compute_nodes: 1, memory_nodes: 1, memory_cores: 1, coroutines: 1}
metric: throughput_mops
y_label: Throughput (Mops/s)
x: {name: threads, label: Threads, values: [1, 4]}
panels:
  - {name: search, title: Search, workload: dmtree-search-only}
series:
  - {label: Expected, index: ideal}
  - {label: Ghost, index: ghost}
scales:
  small: {records: 2000, ops: 2000, warmup: 0}
  default: {records: 2000, ops: 2000, warmup: 0}
  large: {records: 2000, ops: 2000, warmup: 0}
claims:
  - {id: scales, section: "0", text: "four threads beat one", expect: greater,
     lhs: {series: Expected, panel: search, x: 4}, rhs: {series: Expected, panel: search, x: 1}}
  - {id: one-read, section: "0", text: "one READ per search", expect: value, value: 1, within_factor: 1.01, metric: verbs_per_op.READ.read,
     lhs: {series: Expected, panel: search, x: 1}}
  - {id: impossible, section: "0", text: "one thread is 100x four", expect: ratio, value: 100, within_factor: 2,
     lhs: {series: Expected, panel: search, x: 1}, rhs: {series: Expected, panel: search, x: 4}}
  - {id: ghost, section: "0", text: "the ghost index wins", expect: greater,
     lhs: {series: Ghost, panel: search, x: 4}, rhs: {series: Expected, panel: search, x: 4}}
`

func TestSweepResumesAndReports(t *testing.T) {
	s, err := Parse("tiny.yaml", []byte(tinySpec))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	points, err := s.Expand("small")
	if err != nil {
		t.Fatal(err)
	}
	if len(points) != 4 {
		t.Fatalf("%d points, want 2 series x 2 threads", len(points))
	}
	opt := Options{Dir: dir, Scale: "small", Jobs: 2}
	outs, err := Sweep(context.Background(), s, points, opt)
	if err != nil {
		t.Fatal(err)
	}
	r := NewReport(s, "small", outs)
	want := map[string]string{"scales": Pass, "one-read": Pass, "impossible": Missed, "ghost": Missing}
	for _, v := range r.Verdicts {
		if v.Status != want[v.Claim.ID] {
			t.Errorf("claim %s: %s (%s%s), want %s", v.Claim.ID, v.Status, v.Measured, v.Reason, want[v.Claim.ID])
		}
	}
	if len(r.Missing) != 1 || !strings.Contains(r.Missing[0], "ghost") {
		t.Errorf("missing series %v, want the ghost", r.Missing)
	}
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".png", ".pdf", ".svg", ".csv", ".claims.md", ".claims.csv"} {
		if _, err := os.Stat(Base(dir, s) + ext); err != nil {
			t.Errorf("no %s: %v", ext, err)
		}
	}

	// A second sweep runs nothing: every result is read back.
	again, err := Sweep(context.Background(), s, points, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range again {
		if o.Missing == "" && !o.Reused {
			t.Errorf("point %s ran again", o.ID)
		}
	}

	// A broken result file is reported, not silently run again.
	runs, _ := filepath.Glob(filepath.Join(RunsDir(dir, s, "small"), "*.json"))
	if err := os.WriteFile(runs[0], []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Sweep(context.Background(), s, points, opt); err == nil || !strings.Contains(err.Error(), "broken results file") {
		t.Errorf("broken file: error %v", err)
	}
}

func TestSpecErrorsNameFieldAndFile(t *testing.T) {
	cases := map[string]string{
		"unknown field":  strings.Replace(tinySpec, "plot: lines", "plot: lines\ncolour: red", 1),
		"bad plot":       strings.Replace(tinySpec, "plot: lines", "plot: pie", 1),
		"bad axis":       strings.Replace(tinySpec, "name: threads", "name: moons", 1),
		"bad metric":     strings.Replace(tinySpec, "metric: throughput_mops", "metric: speed", 1),
		"bad claim ref":  strings.Replace(tinySpec, "lhs: {series: Expected, panel: search, x: 4}, rhs", "lhs: {series: Expected, panel: search, x: 5}, rhs", 1),
		"bad profile":    strings.Replace(tinySpec, "profile: cx6-100g", "profile: cx9", 1),
		"missing preset": strings.Replace(tinySpec, "  large: {records: 2000, ops: 2000, warmup: 0}\n", "", 1),
	}
	fields := map[string]string{"unknown field": "colour", "bad plot": "field plot", "bad axis": "field x", "bad metric": "field metric",
		"bad claim ref": "claims[0]", "bad profile": "field profile", "missing preset": "field scales"}
	for name, text := range cases {
		_, err := Parse("bad.yaml", []byte(text))
		if err == nil || !strings.Contains(err.Error(), "bad.yaml") || !strings.Contains(err.Error(), fields[name]) {
			t.Errorf("%s: error %v, want one naming bad.yaml and %s", name, err, fields[name])
		}
	}
}

func TestCatalogLoadsAndExpands(t *testing.T) {
	ids, err := IDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		s, err := Lookup(id)
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range Scales {
			if _, err := s.Expand(sc); err != nil {
				t.Errorf("%s at %s: %v", id, sc, err)
			}
		}
	}
	if _, err := Lookup("dex/fig99"); err == nil || !strings.Contains(err.Error(), "known figures: ") {
		t.Errorf("unknown figure: %v", err)
	}
}

// A table over a derived metric axis runs each panel and series once.
func TestDerivedAxisRunsOnce(t *testing.T) {
	spec := strings.NewReplacer(
		"plot: lines", "plot: table",
		"x: {name: threads, label: Threads, values: [1, 4]}", "x: {name: metric, label: Verbs, categories: [verbs_per_op.READ.read, bytes_per_op.READ.total, latency.READ.p99]}",
	).Replace(tinySpec)
	spec = spec[:strings.Index(spec, "claims:")] + `claims:
  - {id: one-read, section: "0", text: "one READ per search", expect: value, value: 1, within_factor: 1.01,
     lhs: {series: Expected, panel: search, category: verbs_per_op.READ.read}}
`
	s, err := Parse("table.yaml", []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	points, err := s.Expand("small")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	outs, err := Sweep(context.Background(), s, points, Options{Dir: dir, Scale: "small", Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	hashes := map[string]bool{}
	for _, o := range outs {
		if o.Missing == "" {
			hashes[o.Hash] = true
			if o.Result == nil {
				t.Errorf("point %s has no result", o.ID)
			}
		}
	}
	if len(hashes) != 1 {
		t.Errorf("%d distinct runs, want 1", len(hashes))
	}
	r := NewReport(s, "small", outs)
	if r.Verdicts[0].Status != Pass {
		t.Errorf("claim: %+v", r.Verdicts[0])
	}
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(Base(dir, s) + ".md")
	if err != nil || !strings.Contains(string(md), "| Search | Expected | 1 | ") {
		t.Errorf("table: %v\n%s", err, md)
	}
}
