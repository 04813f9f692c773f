package experiments

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dmbench/dmbench/bench"
	"github.com/dmbench/dmbench/workloads"
)

// axisKinds maps each axis name to what one x value does to a run.
var axisKinds = map[string]struct {
	doc   string
	apply func(s *Spec, x float64, c *bench.Config, props workloads.Properties) error
}{
	"compute_threads": {"compute threads in the cluster, filling a server (cluster.threads_per_node) before adding the next (DEX section 8.2)",
		func(s *Spec, x float64, c *bench.Config, _ workloads.Properties) error {
			n := int(x)
			per := s.Cluster.ThreadsPerNode
			c.ComputeNodes = (n + per - 1) / per
			c.Threads = (n + c.ComputeNodes - 1) / c.ComputeNodes
			return nil
		}},
	"threads": {"client threads per compute node",
		func(_ *Spec, x float64, c *bench.Config, _ workloads.Properties) error {
			c.Threads = int(x)
			return nil
		}},
	"clients": {"client threads over all compute nodes, spread evenly",
		func(_ *Spec, x float64, c *bench.Config, _ workloads.Properties) error {
			c.Threads = int(math.Ceil(x / float64(c.ComputeNodes)))
			return nil
		}},
	"cache_mb": {"compute-side cache per compute node in the paper's MB, scaled with records",
		func(s *Spec, x float64, c *bench.Config, props workloads.Properties) error {
			c.CacheBytes = scaledCache(s, x*(1<<20), props)
			return nil
		}},
	"zipf": {"Zipfian constant of the request distribution; 0 means uniform",
		func(_ *Spec, x float64, _ *bench.Config, props workloads.Properties) error {
			if x == 0 {
				props["requestdistribution"] = "uniform"
				return nil
			}
			props["requestdistribution"] = "zipfian"
			props[workloads.PropZipfianConstant] = strconv.FormatFloat(x, 'g', -1, 64)
			return nil
		}},
	"value_size": {"value bytes",
		func(_ *Spec, x float64, _ *bench.Config, props workloads.Properties) error {
			props["fieldcount"], props["fieldlength"] = "1", strconv.Itoa(int(x))
			return nil
		}},
	"kv_size": {"key-value bytes, split evenly between key and value (keys at least 8 bytes)",
		func(_ *Spec, x float64, _ *bench.Config, props workloads.Properties) error {
			k := max(8, int(x)/2)
			props[workloads.PropKeySize] = strconv.Itoa(k)
			props["fieldcount"], props["fieldlength"] = "1", strconv.Itoa(max(1, int(x)-k))
			return nil
		}},
	"scan_length": {"maximum scan length",
		func(_ *Spec, x float64, _ *bench.Config, props workloads.Properties) error {
			props["maxscanlength"] = strconv.Itoa(int(x))
			return nil
		}},
	"memory_cores": {"RPC cores per memory node",
		func(_ *Spec, x float64, c *bench.Config, _ workloads.Properties) error {
			c.MemoryCores = int(x)
			return nil
		}},
	"workload": {"categorical: one workload per category (x.categories)", nil},
	// Derived axes do not change the run: each category reads another
	// number from the same result, so a panel and series run once.
	"percentile": {"derived, categorical: latency percentiles (p50, p90, p99, p999, p9999, mean) substituted for {x} in the metric", nil},
	"metric":     {"derived, categorical: each category is a metric name (a table of verbs and bytes per operation)", nil},
	"time":       {"derived: throughput over the measured phase in ms, one run per panel and series, in windows of the scale's timeline_ms", nil},
}

// timeline is the one x value of every point of a time axis.
const timeline = "timeline"

// AxisNames lists the axis kinds.
func AxisNames() []string {
	names := make([]string, 0, len(axisKinds))
	for n := range axisKinds {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (a *Axis) categorical() bool {
	return a.Name == "workload" || a.Name == "percentile" || a.Name == "metric"
}

// derived reports an axis whose values do not change the run.
func (a *Axis) derived() bool {
	return a.Name == "percentile" || a.Name == "metric" || a.Name == "time"
}

func (a *Axis) validate(s *Spec) error {
	if _, ok := axisKinds[a.Name]; !ok {
		return fmt.Errorf("axis %q is not one of %s", a.Name, strings.Join(AxisNames(), ", "))
	}
	if a.Name == "time" {
		if len(a.Values) > 0 || len(a.Categories) > 0 {
			return errors.New("a time axis takes its values from the runs' timelines: give no values or categories")
		}
		return nil
	}
	if a.categorical() {
		if len(a.Categories) == 0 {
			return fmt.Errorf("a %s axis needs categories", a.Name)
		}
		for _, c := range a.Categories {
			if a.Name == "workload" && !slices.Contains(workloads.Builtins(), c) {
				return fmt.Errorf("category %q is not a built-in workload", c)
			}
			if a.derived() {
				for _, p := range s.Panels {
					if _, err := s.metricFor(p.Name, c); err != nil {
						return fmt.Errorf("category %q: %w", c, err)
					}
				}
			}
		}
		return nil
	}
	if len(a.Values) == 0 {
		return errors.New("need values")
	}
	if a.Name == "compute_threads" && s.Cluster.ThreadsPerNode < 1 {
		return errors.New("compute_threads needs cluster.threads_per_node")
	}
	if a.Name == "cache_mb" && s.Cache == nil {
		return errors.New("cache_mb needs cache.paper_records to scale by")
	}
	return nil
}

// scaledCache scales a paper's cache size by the run's data set over the
// paper's records: its loaded records or, for a run that starts from an
// empty tree (recordcount 0, which only insert-only workloads take), the
// records it inserts, warm-up included. A LOAD panel so runs with the
// cache its paper gives every panel, not with none.
func scaledCache(s *Spec, paperBytes float64, props workloads.Properties) uint64 {
	records, _ := strconv.ParseFloat(props["recordcount"], 64)
	if records == 0 {
		ops, _ := strconv.ParseFloat(props["operationcount"], 64)
		warm, _ := strconv.ParseFloat(props[workloads.PropWarmupOperationCount], 64)
		records = ops + warm
	}
	return uint64(paperBytes * records / float64(s.Cache.PaperRecords))
}

// xLabel formats an x value for ids and tables.
func xLabel(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
