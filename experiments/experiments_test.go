package experiments

import (
	"context"
	"os"
	"path/filepath"
	"slices"
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

	// A panel added later that plots another metric of the same runs
	// reads their results back too.
	wider, err := Parse("tiny.yaml", []byte(strings.Replace(tinySpec,
		"  - {name: search, title: Search, workload: dmtree-search-only}\n",
		"  - {name: search, title: Search, workload: dmtree-search-only}\n  - {name: bytes, title: Bytes, workload: dmtree-search-only, metric: bytes_per_op.total.total}\n", 1)))
	if err != nil {
		t.Fatal(err)
	}
	widerPoints, err := wider.Expand("small")
	if err != nil {
		t.Fatal(err)
	}
	outs, err = Sweep(context.Background(), wider, widerPoints, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		if o.Missing == "" && !o.Reused {
			t.Errorf("point %s of the added panel ran instead of sharing its run", o.ID)
		}
	}

	// A broken result file is reported, not silently run again.
	runs, _ := filepath.Glob(filepath.Join(RunsDir(dir, s, "small"), "search__*.json"))
	if err := os.WriteFile(runs[0], []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Sweep(context.Background(), s, points, opt); err == nil || !strings.Contains(err.Error(), "broken results file") {
		t.Errorf("broken file: error %v", err)
	}
}

func TestSpecErrorsNameFieldAndFile(t *testing.T) {
	cases := map[string]string{
		"unknown field":           strings.Replace(tinySpec, "plot: lines", "plot: lines\ncolour: red", 1),
		"bad plot":                strings.Replace(tinySpec, "plot: lines", "plot: pie", 1),
		"bad axis":                strings.Replace(tinySpec, "name: threads", "name: moons", 1),
		"bad metric":              strings.Replace(tinySpec, "metric: throughput_mops", "metric: speed", 1),
		"bad claim ref":           strings.Replace(tinySpec, "lhs: {series: Expected, panel: search, x: 4}, rhs", "lhs: {series: Expected, panel: search, x: 5}, rhs", 1),
		"claim ref without x":     strings.Replace(tinySpec, "lhs: {series: Expected, panel: search, x: 4}, rhs", "lhs: {series: Expected, panel: search}, rhs", 1),
		"bad profile":             strings.Replace(tinySpec, "profile: cx6-100g", "profile: cx9", 1),
		"missing preset":          strings.Replace(tinySpec, "  large: {records: 2000, ops: 2000, warmup: 0}\n", "", 1),
		"bad coroutines":          strings.Replace(tinySpec, "workload: dmtree-search-only}", "workload: dmtree-search-only, coroutines: -1}", 1),
		"bad workload coroutines": strings.Replace(tinySpec, "{label: Ghost, index: ghost}", "{label: Ghost, index: ghost, workload_coroutines: {dmtree-scan-onyl: 1}}", 1),
	}
	fields := map[string]string{"unknown field": "colour", "bad plot": "field plot", "bad axis": "field x", "bad metric": "field metric",
		"bad claim ref": "x 5 is not on the x axis [", "claim ref without x": "names no x", "bad profile": "field profile", "missing preset": "field scales", "bad coroutines": "panels[0].coroutines",
		"bad workload coroutines": "series[1].workload_coroutines"}
	for name, text := range cases {
		_, err := Parse("bad.yaml", []byte(text))
		if err == nil || !strings.Contains(err.Error(), "bad.yaml") || !strings.Contains(err.Error(), fields[name]) {
			t.Errorf("%s: error %v, want one naming bad.yaml and %s", name, err, fields[name])
		}
	}
}

// A panel's coroutines apply to its runs; a series' own win.
func TestPanelCoroutines(t *testing.T) {
	spec := strings.NewReplacer(
		"workload: dmtree-search-only}", "workload: dmtree-search-only, coroutines: 3}",
		"{label: Ghost, index: ghost}", "{label: Ghost, index: ghost, coroutines: 2}",
	).Replace(tinySpec)
	s, err := Parse("coroutines.yaml", []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	points, err := s.Expand("small")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range points {
		want := map[string]int{"Expected": 3, "Ghost": 2}[p.Series]
		if p.Config.Coroutines != want {
			t.Errorf("%s at %v: %d coroutines per thread, want %d", p.Series, p.X, p.Config.Coroutines, want)
		}
	}
	// A series' coroutines for a workload win over both.
	spec = strings.Replace(spec, "{label: Ghost, index: ghost, coroutines: 2}", "{label: Ghost, index: ghost, coroutines: 2, workload_coroutines: {dmtree-search-only: 1}}", 1)
	if s, err = Parse("coroutines.yaml", []byte(spec)); err != nil {
		t.Fatal(err)
	}
	if points, err = s.Expand("small"); err != nil {
		t.Fatal(err)
	}
	for _, p := range points {
		want := map[string]int{"Expected": 3, "Ghost": 1}[p.Series]
		if p.Config.Coroutines != want {
			t.Errorf("workload_coroutines: %s at %v: %d coroutines per thread, want %d", p.Series, p.X, p.Config.Coroutines, want)
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

// A time axis runs each panel and series once and draws its timeline;
// series change the cluster, and claims may read another metric per side.
func TestTimeAxisAndSeriesSettings(t *testing.T) {
	spec := strings.NewReplacer(
		"x: {name: threads, label: Threads, values: [1, 4]}", "x: {name: time, label: Time (s)}",
		"  - {label: Ghost, index: ghost}\n", "  - {label: Narrow, index: ideal, threads: 4, coroutines: 2}\n",
		"small: {records: 2000, ops: 2000, warmup: 0}", "small: {records: 2000, ops: 4000, warmup: 0, timeline_ms: 0.05, max_ms: 5}",
		"default: {records: 2000, ops: 2000, warmup: 0}", "default: {records: 2000, ops: 2000, warmup: 0, timeline_ms: 1}",
		"large: {records: 2000, ops: 2000, warmup: 0}", "large: {records: 2000, ops: 2000, warmup: 0, timeline_ms: 1}",
	).Replace(tinySpec)
	spec = spec[:strings.Index(spec, "claims:")] + `claims:
  - {id: more-is-faster, section: "0", text: "72 clients (the default threads) beat 8", expect: greater, metric: timeline.end_mops,
     lhs: {series: Expected, panel: search}, rhs: {series: Narrow, panel: search}}
  - {id: steady, section: "0", text: "the rate holds to the end", expect: similar, within_factor: 1.5,
     lhs: {series: Narrow, panel: search, metric: timeline.end_mops}, rhs: {series: Narrow, panel: search, metric: throughput_mops}}
  - {id: slow-read, section: "0", text: "a read waits over a microsecond", expect: above, value: 1000, metric: activity.READ.read,
     lhs: {series: Expected, panel: search}}
`
	s, err := Parse("time.yaml", []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	points, err := s.Expand("small")
	if err != nil {
		t.Fatal(err)
	}
	if len(points) != 2 || points[1].Config.Threads != 4 || points[1].Config.Coroutines != 2 || points[1].Config.TimelineNs != 50_000 {
		t.Fatalf("points %+v: want one per series, the second at 4 threads x 2 coroutines with a 50 us timeline", points)
	}
	dir := t.TempDir()
	outs, err := Sweep(context.Background(), s, points, Options{Dir: dir, Scale: "small", Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := NewReport(s, "small", outs)
	for _, v := range r.Verdicts {
		if v.Status != Pass {
			t.Errorf("claim %s: %s (%s%s)", v.Claim.ID, v.Status, v.Measured, v.Reason)
		}
	}
	f := r.Figure()
	if got := len(f.Panels[0].Series); got != 2 || len(f.Panels[0].Series[0].X) < 2 {
		t.Errorf("timeline panel has %d series, want 2 with a point per window: %+v", got, f.Panels[0].Series)
	}
	if !slices.ContainsFunc(f.Notes, func(n string) bool { return strings.Contains(n, "or 5 ms of virtual time, whichever ends first") }) {
		t.Errorf("the figure's notes do not give the runs' time cap: %q", f.Notes)
	}
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
}

// A panel's own metric on a metric axis takes each category as {x}.
func TestPanelMetric(t *testing.T) {
	spec := strings.NewReplacer(
		"plot: lines", "plot: table",
		"x: {name: threads, label: Threads, values: [1, 4]}", "x: {name: metric, label: Part, categories: [read, compute]}",
		"workload: dmtree-search-only}", "workload: dmtree-search-only, metric: \"activity.READ.{x}\"}",
	).Replace(tinySpec)
	spec = spec[:strings.Index(spec, "claims:")] + `claims:
  - {id: reads-dominate, section: "0", text: "a search waits for its READ longer than it computes", expect: greater,
     lhs: {series: Expected, panel: search, category: read}, rhs: {series: Expected, panel: search, category: compute}}
`
	s, err := Parse("panel.yaml", []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	points, err := s.Expand("small")
	if err != nil {
		t.Fatal(err)
	}
	outs, err := Sweep(context.Background(), s, points, Options{Dir: t.TempDir(), Scale: "small", Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if v := NewReport(s, "small", outs).Verdicts[0]; v.Status != Pass {
		t.Errorf("claim: %s (%s%s)", v.Status, v.Measured, v.Reason)
	}
	bad := strings.Replace(spec, `metric: "activity.READ.{x}"`, `metric: "activity.READ.{x}.z"`, 1)
	if _, err := Parse("bad.yaml", []byte(bad)); err == nil || !strings.Contains(err.Error(), "activity.READ.read.z") {
		t.Errorf("bad panel metric: %v", err)
	}
}

// Replicates runs each point under more seeds: replicate 0 is the point
// itself, the others differ in both seeds and so in their files; the
// report plots and tables the mean with its spread and the claims say in
// how many seeds they hold.
func TestReplicatesSweepAndReport(t *testing.T) {
	s, err := Parse("tiny.yaml", []byte(strings.Replace(tinySpec, "dmtree-search-only", "dmtree-ycsb-a", 1)))
	if err != nil {
		t.Fatal(err)
	}
	points, err := s.Expand("small")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Replicates(points, 0); err == nil {
		t.Error("0 seeds accepted")
	}
	if one, _ := Replicates(points, 1); !slices.EqualFunc(one, points, func(a, b Point) bool { return a.ID == b.ID }) {
		t.Error("one seed changed the points")
	}
	reps, err := Replicates(points, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 3*len(points) {
		t.Fatalf("%d points, want %d", len(reps), 3*len(points))
	}
	ids := map[string]bool{}
	for i, p := range reps {
		base, k := points[i%len(points)], i/len(points)
		if p.Replicate != k || p.Config.Seed != base.Config.Seed+uint64(k) || p.Config.Workload.Seed != base.Config.Workload.Seed+int64(k) {
			t.Errorf("point %d: replicate %d, seeds %d/%d; want %d, %d/%d", i, p.Replicate, p.Config.Seed, p.Config.Workload.Seed,
				k, base.Config.Seed+uint64(k), base.Config.Workload.Seed+int64(k))
		}
		if k == 0 && p.ID != base.ID || ids[p.ID] {
			t.Errorf("point %d: ID %s (the point's own %s)", i, p.ID, base.ID)
		}
		ids[p.ID] = true
	}
	if points[0].Config.Workload.Seed != 1 {
		t.Errorf("Replicates changed the points' workload: seed %d", points[0].Config.Workload.Seed)
	}
	outs, err := Sweep(context.Background(), s, reps, Options{Dir: t.TempDir(), Scale: "small", Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	r := NewReport(s, "small", outs)
	if r.Replicates != 3 {
		t.Errorf("report of %d replicates, want 3", r.Replicates)
	}
	distinct := map[string]bool{}
	for _, o := range outs {
		if o.Series == "Expected" && o.X == 4 {
			distinct[o.Result.EventHash] = true
		}
	}
	if len(distinct) != 3 {
		t.Errorf("the three seeds of a point gave %d distinct runs", len(distinct))
	}
	for _, v := range r.Verdicts {
		if v.Claim.ID == "scales" && !strings.Contains(v.Measured, "means of 3 seeds, holds in") {
			t.Errorf("claim scales: measured %q does not say how many seeds it holds in", v.Measured)
		}
	}
	f := r.Figure()
	se := f.Panels[0].Series[0]
	if len(se.Lo) != len(se.Y) || !(se.Lo[1] <= se.Y[1] && se.Y[1] <= se.Hi[1]) {
		t.Errorf("series %s: mean %v outside its spread %v-%v", se.Label, se.Y, se.Lo, se.Hi)
	}
	if !slices.ContainsFunc(f.Notes, func(n string) bool { return strings.Contains(n, "mean of 3 seeds") }) {
		t.Errorf("notes %q do not say the points are means", f.Notes)
	}
}
