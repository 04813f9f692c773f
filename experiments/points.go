package experiments

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/dmbench/dmbench/bench"
	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/workloads"
)

// pointKey names a point of a figure.
type pointKey struct{ panel, series, x string }

// Point is one run of a figure.
type Point struct {
	// ID is unique within the figure and safe as a file name; it ends in
	// a hash of the run's configuration, so a changed spec re-runs.
	ID     string
	Panel  string
	Series string
	X      float64
	// Category is the x value on a workload axis.
	Category string
	Config   bench.Config
	// Hash identifies the run's configuration: points of a derived axis
	// share it, and one run serves them all.
	Hash string
	// Missing says why the point cannot run: its index is not
	// implemented yet.
	Missing string
	// NeedsInput says which input file the point's run needs and where
	// to fetch it (a trace that is not shipped); a result saved by an
	// earlier sweep that had the file still counts.
	NeedsInput string
	// Replicate numbers the runs of one point under different seeds
	// (Replicates); replicate 0 is the spec's own seed.
	Replicate int
}

// Inputs locate the input files that are not shipped with dmbench.
type Inputs struct {
	// TraceDir is the folder a workload's relative tracefile is looked
	// up in; "" looks it up in the working folder.
	TraceDir string
}

func (p *Point) key() pointKey {
	x := p.Category
	if x == "" {
		x = xLabel(p.X)
	}
	return pointKey{p.Panel, p.Series, x}
}

// XLabel is the point's x value as text.
func (p *Point) XLabel() string { return p.key().x }

// Expand turns the spec at a scale into its points: panels x series x
// axis values, in that order, with input files looked up in the working
// folder.
func (s *Spec) Expand(scale string) ([]Point, error) {
	return s.ExpandInputs(scale, Inputs{})
}

// ExpandInputs is Expand with input files looked up where in says.
func (s *Spec) ExpandInputs(scale string, in Inputs) ([]Point, error) {
	sc, ok := s.Scales[scale]
	if !ok {
		return nil, fmt.Errorf("scale %q is not one of %s", scale, strings.Join(Scales, ", "))
	}
	var xs []float64
	var cats []string
	switch {
	case s.X.Name == "time":
		cats = []string{timeline}
	case s.X.categorical():
		cats = s.X.Categories
	default:
		xs = s.X.Values
		if len(sc.X) > 0 {
			xs = sc.X
		}
	}
	var points []Point
	for _, panel := range s.Panels {
		for _, se := range s.Series {
			n := max(len(xs), len(cats))
			for i := range n {
				p := Point{Panel: panel.Name, Series: se.Label}
				workload := panel.Workload
				if cats != nil {
					p.Category = cats[i]
					if s.X.Name == "workload" {
						workload = cats[i]
					}
				} else {
					p.X = xs[i]
				}
				if err := s.configure(&p, sc, panel, se, workload, in); err != nil {
					return nil, err
				}
				points = append(points, p)
			}
		}
	}
	return points, nil
}

// configure builds a point's run configuration.
func (s *Spec) configure(p *Point, sc Scale, panel Panel, se Series, workload string, in Inputs) error {
	c := bench.Default()
	c.Profile = s.Profile
	cl := s.Cluster
	c.ComputeNodes = max(cl.ComputeNodes, 1)
	c.MemoryNodes, c.MemoryCores, c.Coroutines = cl.MemoryNodes, cl.MemoryCores, cl.Coroutines
	if cl.Threads > 0 {
		c.Threads = cl.Threads
	}
	if sc.Threads > 0 {
		c.Threads = sc.Threads
	}
	if se.Threads > 0 {
		c.Threads = se.Threads
	}
	if panel.Coroutines > 0 {
		c.Coroutines = panel.Coroutines
	}
	if se.Coroutines > 0 {
		c.Coroutines = se.Coroutines
	}
	if n := se.WorkloadCoroutines[workload]; n > 0 {
		c.Coroutines = n
	}
	c.Index, c.Params = se.Index, se.Params
	c.MaxPhaseNs, c.TimelineNs = int64(sc.MaxMs*1e6), int64(sc.TimelineMs*1e6)
	if rp := s.Repartition; rp != nil {
		c.ComputeNodes++ // the spare
		c.Repartition = &bench.Repartition{AtNs: int64(sc.RepartitionAtMs * 1e6), From: rp.From, Fraction: rp.Fraction}
	}
	props := workloads.Properties{
		"recordcount":                      strconv.FormatInt(sc.Records, 10),
		"operationcount":                   strconv.FormatInt(sc.Ops, 10),
		workloads.PropWarmupOperationCount: strconv.FormatInt(sc.Warmup, 10),
	}
	maps.Copy(props, panel.Props)
	maps.Copy(props, se.Props)
	if s.Cache != nil {
		b, _ := humanize.ParseBytes(s.Cache.PaperBytes) // validated
		c.CacheBytes = scaledCache(s, float64(b), props)
		if se.CacheMB > 0 {
			c.CacheBytes = scaledCache(s, se.CacheMB*(1<<20), props)
		}
	}
	if apply := axisKinds[s.X.Name].apply; apply != nil {
		if err := apply(s, p.X, &c, props); err != nil {
			return fmt.Errorf("spec %s: x = %v: %w", s.file, p.X, err)
		}
	}
	w, err := workloads.Builtin(workload, props)
	if err != nil {
		return fmt.Errorf("spec %s: panel %s, series %s: %w", s.file, panel.Name, se.Label, err)
	}
	if w.TraceFile != "" && in.TraceDir != "" && !filepath.IsAbs(w.TraceFile) {
		w.TraceFile = filepath.Join(in.TraceDir, w.TraceFile)
	}
	c.Workload = w
	p.Config = c
	if _, err := indexes.Lookup(se.Index); err != nil {
		p.Missing = fmt.Sprintf("index %s is not implemented yet", se.Index)
	}
	p.NeedsInput = w.TraceMissing()
	p.identify()
	return nil
}

// identify names the point by its configuration (Hash and ID).
func (p *Point) identify() {
	p.Hash = configHash(&p.Config)
	p.ID = fmt.Sprintf("%s__%s__%s__%s", safe(p.Panel), safe(p.Series), safe(p.key().x), p.Hash)
}

// MaxReplicates bounds Replicates' n.
const MaxReplicates = 100

// Replicates repeats every point under n seeds, so that a figure shows
// how much its numbers owe to one draw of the random streams: replicate
// k runs with the fabric's and the workload's seeds both raised by k, and
// replicate 0 is the point itself, so one replicate is the plain figure
// and its saved runs count. The points come replicate by replicate: the
// whole figure once, then again under the next seed, so that the runs
// of a series that warm up alike stay together (bench.Warm) and an
// interrupted sweep has whole figures first.
func Replicates(points []Point, n int) ([]Point, error) {
	if n < 1 || n > MaxReplicates {
		return nil, fmt.Errorf("want 1 to %d seeds per point, not %d", MaxReplicates, n)
	}
	out := slices.Clip(points)
	for k := 1; k < n; k++ {
		for _, p := range points {
			w := *p.Config.Workload
			w.Seed += int64(k)
			p.Config.Workload = &w
			p.Config.Seed += uint64(k)
			p.Replicate = k
			p.identify()
			out = append(out, p)
		}
	}
	return out, nil
}

// safe keeps a label usable in a file name.
func safe(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' {
			return r
		}
		return '_'
	}, s)
}

// configHash is a short hash of configKey: it names a run's result file.
func configHash(c *bench.Config) string {
	h := fnv.New64a()
	h.Write([]byte(configKey(c)))
	return fmt.Sprintf("%08x", h.Sum64()>>32)
}

// configKey is everything that determines a run, the model's version
// included (JSON writes map keys sorted, so equal configs have equal
// keys). A trace counts by its file name, not the folder it was found in,
// so that saved runs are found again wherever the traces are kept.
func configKey(c *bench.Config) string {
	plain := *c
	plain.Workload = nil
	props := c.Workload.Properties()
	if tf, ok := props[workloads.PropTraceFile]; ok {
		props[workloads.PropTraceFile] = filepath.Base(tf)
	}
	b, _ := json.Marshal(struct {
		C     bench.Config
		Props workloads.Properties
		Model int
	}{plain, props, cost.ModelVersion})
	return string(b)
}
