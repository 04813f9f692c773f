package experiments

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/dustin/go-humanize"
	"go.yaml.in/yaml/v3"

	"github.com/dmbench/dmbench/transport/sim"
	"github.com/dmbench/dmbench/workloads"
)

// Spec is one figure or table of a paper.
type Spec struct {
	ID      string `yaml:"id"`      // "<paper>/<figure>", e.g. "dex/fig6"
	Paper   string `yaml:"paper"`   // dex, dmtree, rftree, dolphin
	Figure  string `yaml:"figure"`  // as the paper names it: "Figure 6", "Table 2"
	Title   string `yaml:"title"`   // the paper's caption
	Section string `yaml:"section"` // where the experiment is described
	// Plot is how the figure is drawn: lines (numeric x), bars (grouped
	// bars over categorical x), percentiles (latency bars per
	// percentile), table (no plot, a table of the metric).
	Plot    string  `yaml:"plot"`
	Profile string  `yaml:"profile"` // hardware profile of the paper's testbed
	Cluster Cluster `yaml:"cluster"`
	// Metric is what the y axis shows (see Metric for the names).
	Metric string `yaml:"metric"`
	YLabel string `yaml:"y_label"`
	LogY   bool   `yaml:"log_y"`
	X      Axis   `yaml:"x"`
	// Cache gives the paper's compute-side cache, scaled with records.
	Cache  *Cache           `yaml:"cache"`
	Panels []Panel          `yaml:"panels"`
	Series []Series         `yaml:"series"`
	Scales map[string]Scale `yaml:"scales"`
	Claims []Claim          `yaml:"claims"`
	// Repartition scales out mid-run (DEX Figure 10): the cluster gains a
	// spare compute node beyond cluster.compute_nodes, and at each scale's
	// repartition_at_ms compute node From hands it the upper Fraction of
	// its keys.
	Repartition *RepartitionSpec `yaml:"repartition"`
	// Notes record choices the paper leaves open (values read off a plot,
	// an unstated panel parameter).
	Notes []string `yaml:"notes"`

	file string // where it was loaded from, for messages
}

// Cluster is the testbed's shape.
type Cluster struct {
	ComputeNodes int `yaml:"compute_nodes"`
	MemoryNodes  int `yaml:"memory_nodes"`
	Threads      int `yaml:"threads"` // per compute node
	Coroutines   int `yaml:"coroutines"`
	MemoryCores  int `yaml:"memory_cores"`
	// ThreadsPerNode is the cores of one compute server, for the
	// compute_threads axis: threads fill a server before the next one
	// is added (DEX section 8.2).
	ThreadsPerNode int `yaml:"threads_per_node"`
}

// Axis is the swept parameter.
type Axis struct {
	// Name is one of the axis kinds in axes.go.
	Name   string    `yaml:"name"`
	Label  string    `yaml:"label"`
	Values []float64 `yaml:"values"`
	// Categories are the x values of a categorical axis (workload).
	Categories []string `yaml:"categories"`
	LogX       bool     `yaml:"log_x"`
}

// Cache is the compute-side cache per compute node the paper used, and the
// record count it was sized against.
type Cache struct {
	PaperBytes   string `yaml:"paper_bytes"` // e.g. 256MiB
	PaperRecords int64  `yaml:"paper_records"`
}

// Panel is one sub-figure: a workload and its property overrides, the
// metric it shows when it is not the spec's (a Load panel's INSERT
// latency beside the READ latency of the others), and the coroutines per
// thread when its runs differ (DMTree's scans run without coroutines). A
// series' own coroutines win over the panel's.
type Panel struct {
	Name       string            `yaml:"name"`
	Title      string            `yaml:"title"`
	Workload   string            `yaml:"workload"`
	Props      map[string]string `yaml:"props"`
	Metric     string            `yaml:"metric"`
	YLabel     string            `yaml:"y_label"`
	Coroutines int               `yaml:"coroutines"`
}

// Series is one line or bar group: an index and its variant, and the
// cluster settings it changes (a series at 18 threads, or with its own
// cache size).
type Series struct {
	Label      string            `yaml:"label"`
	Index      string            `yaml:"index"`
	Params     map[string]string `yaml:"params"`
	Props      map[string]string `yaml:"props"`
	Threads    int               `yaml:"threads"`    // per compute node
	Coroutines int               `yaml:"coroutines"` // per thread
	CacheMB    float64           `yaml:"cache_mb"`   // the paper's MB per compute node, scaled with records
	// WorkloadCoroutines overrides Coroutines for the named workloads,
	// as a benchmark that turns coroutines off for some (the DMTree
	// artifact's SMART, CHIME and ROLEX run scans one per thread).
	WorkloadCoroutines map[string]int `yaml:"workload_coroutines"`
}

// RepartitionSpec is the scale-out of a timeline figure.
type RepartitionSpec struct {
	From     int     `yaml:"from"`
	Fraction float64 `yaml:"fraction"`
}

// Scale is a preset of the run size.
type Scale struct {
	Records int64 `yaml:"records"`
	Ops     int64 `yaml:"ops"`
	Warmup  int64 `yaml:"warmup"`
	// X, when set, restricts the axis to these values at this scale.
	X []float64 `yaml:"x"`
	// Threads, when set, overrides the cluster's threads per compute node
	// (a smaller cluster for a quick check).
	Threads int `yaml:"threads"`
	// MaxMs caps each run's measured phase in virtual ms; TimelineMs is
	// the window of a time axis; RepartitionAtMs when the spec's
	// repartitioning starts. The paper's seconds scale down with records.
	MaxMs           float64 `yaml:"max_ms"`
	TimelineMs      float64 `yaml:"timeline_ms"`
	RepartitionAtMs float64 `yaml:"repartition_at_ms"`
}

// Scales lists the preset names in order of size.
var Scales = []string{"small", "default", "large"}

// Plots lists the plot kinds.
var Plots = []string{"lines", "bars", "percentiles", "table"}

// Load reads a spec file.
func Load(path string) (*Spec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read spec: %w", err)
	}
	return Parse(path, b)
}

// Parse decodes a spec strictly: an unknown field is an error naming it
// and the file.
func Parse(file string, b []byte) (*Spec, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var s Spec
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("spec %s: %w", file, err)
	}
	s.file = file
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// File is where the spec came from.
func (s *Spec) File() string { return s.file }

// Validate checks every field and names the first bad ones with the file.
func (s *Spec) Validate() error {
	var errs []error
	bad := func(field, format string, a ...any) {
		errs = append(errs, fmt.Errorf("spec %s: field %s: %s", s.file, field, fmt.Sprintf(format, a...)))
	}
	if paper, fig, ok := strings.Cut(s.ID, "/"); !ok || paper == "" || fig == "" {
		bad("id", "%q is not <paper>/<figure>", s.ID)
	} else if paper != s.Paper {
		bad("paper", "%q does not match id %q", s.Paper, s.ID)
	}
	if !slices.Contains(Plots, s.Plot) {
		bad("plot", "%q is not one of %s", s.Plot, strings.Join(Plots, ", "))
	}
	if _, err := sim.LookupProfile(s.Profile); err != nil {
		bad("profile", "%v", err)
	}
	c := s.Cluster
	for _, f := range []struct {
		name string
		v    int
	}{{"cluster.memory_nodes", c.MemoryNodes}, {"cluster.coroutines", c.Coroutines}, {"cluster.memory_cores", c.MemoryCores}} {
		if f.v < 1 {
			bad(f.name, "%d: need at least 1", f.v)
		}
	}
	if err := s.X.validate(s); err != nil {
		bad("x", "%v", err)
	}
	if !s.X.derived() {
		if _, err := metricOf(s.Metric); err != nil {
			bad("metric", "%v", err)
		}
	}
	if s.Cache != nil {
		if _, err := humanize.ParseBytes(s.Cache.PaperBytes); err != nil {
			bad("cache.paper_bytes", "%q is not a byte size", s.Cache.PaperBytes)
		}
		if s.Cache.PaperRecords < 1 {
			bad("cache.paper_records", "%d: need the paper's record count", s.Cache.PaperRecords)
		}
	}
	if len(s.Panels) == 0 {
		bad("panels", "need at least one")
	}
	for i, p := range s.Panels {
		if p.Name == "" || p.Workload == "" && s.X.Name != "workload" {
			bad(fmt.Sprintf("panels[%d]", i), "need a name and a workload")
		}
		if p.Coroutines < 0 {
			bad(fmt.Sprintf("panels[%d].coroutines", i), "%d: may not be negative", p.Coroutines)
		}
		if p.Metric != "" && !s.X.derived() {
			if _, err := metricOf(p.Metric); err != nil {
				bad(fmt.Sprintf("panels[%d].metric", i), "%v", err)
			}
		}
	}
	if len(s.Series) == 0 {
		bad("series", "need at least one")
	}
	labels := map[string]bool{}
	for i, se := range s.Series {
		if se.Label == "" || se.Index == "" {
			bad(fmt.Sprintf("series[%d]", i), "need a label and an index")
		}
		if labels[se.Label] {
			bad(fmt.Sprintf("series[%d].label", i), "%q used twice", se.Label)
		}
		labels[se.Label] = true
		if se.Threads < 0 || se.Coroutines < 0 || se.CacheMB < 0 {
			bad(fmt.Sprintf("series[%d]", i), "threads %d, coroutines %d, cache_mb %g: none may be negative", se.Threads, se.Coroutines, se.CacheMB)
		}
		for _, w := range slices.Sorted(maps.Keys(se.WorkloadCoroutines)) {
			if n := se.WorkloadCoroutines[w]; n < 1 || !slices.Contains(workloads.Builtins(), w) {
				bad(fmt.Sprintf("series[%d].workload_coroutines", i), "%s: %d: need a built-in workload (dmbench list workloads) and at least 1 coroutine", w, n)
			}
		}
		if se.CacheMB > 0 && s.Cache == nil {
			bad(fmt.Sprintf("series[%d].cache_mb", i), "needs cache.paper_records to scale by")
		}
	}
	if r := s.Repartition; r != nil && !(r.Fraction > 0 && r.Fraction < 1) {
		bad("repartition.fraction", "%g: need 0 < fraction < 1", r.Fraction)
	}
	for _, name := range Scales {
		sc, ok := s.Scales[name]
		if !ok {
			bad("scales", "no %q preset (need %s)", name, strings.Join(Scales, ", "))
			continue
		}
		if sc.Ops < 1 || sc.Records < 0 || sc.Warmup < 0 {
			bad("scales."+name, "records %d, ops %d, warmup %d: need ops >= 1 and no negative count", sc.Records, sc.Ops, sc.Warmup)
		}
		if sc.MaxMs < 0 || sc.TimelineMs < 0 || sc.RepartitionAtMs < 0 {
			bad("scales."+name, "max_ms %g, timeline_ms %g, repartition_at_ms %g: none may be negative", sc.MaxMs, sc.TimelineMs, sc.RepartitionAtMs)
		}
		if s.X.Name == "time" && sc.TimelineMs <= 0 {
			bad("scales."+name+".timeline_ms", "a time axis needs the window of its timeline")
		}
		if (s.Repartition != nil) != (sc.RepartitionAtMs > 0) {
			bad("scales."+name+".repartition_at_ms", "set it exactly when the spec has a repartition")
		}
	}
	for name := range s.Scales {
		if !slices.Contains(Scales, name) {
			bad("scales", "unknown preset %q (presets are %s)", name, strings.Join(Scales, ", "))
		}
	}
	for i := range s.Claims {
		cl := &s.Claims[i] // validate completes the refs of a time axis
		if err := cl.validate(s); err != nil {
			bad(fmt.Sprintf("claims[%d] (%s)", i, cl.ID), "%v", err)
		}
	}
	return errors.Join(errs...)
}
