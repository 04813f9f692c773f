package experiments

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dmbench/dmbench/bench"
)

// A metric reads one number from a result.
type metric func(r *bench.Result) (float64, bool)

// metricFor is the metric a point of category x shows: on a metric axis
// the category names it; otherwise {x} in the spec's metric is replaced by
// the category (a percentile), and without {x} it is the spec's metric.
func (s *Spec) metricFor(x string) (metric, error) {
	if s.X.Name == "metric" {
		return metricOf(x)
	}
	return metricOf(strings.ReplaceAll(s.Metric, "{x}", x))
}

// Metric names:
//
//	throughput_mops
//	latency.<OP>.<mean|p50|p90|p99|p999|p9999>   OP: READ, UPDATE, INSERT, SCAN, READ_MODIFY_WRITE
//	verbs_per_op.<OP|total>.<read|write|cas|masked_cas|faa|rpc|total>
//	bytes_per_op.<OP|total>.<read|write|cas|masked_cas|faa|rpc|total>
//	nic_mops.<memory|compute>.<max|mean>, msg_util.<...>, bw_util.<...>, cpu_util.<...>
//	cache_hit_ratio, cs_cache_bytes, ms_bytes
func metricOf(name string) (metric, error) {
	parts := strings.Split(name, ".")
	fail := fmt.Errorf("metric %q is not one of: throughput_mops, latency.<OP>.<stat>, verbs_per_op.<OP>.<verb>, bytes_per_op.<OP>.<verb>, <nic_mops|msg_util|bw_util|cpu_util>.<memory|compute>.<max|mean>, cache_hit_ratio, cs_cache_bytes, ms_bytes", name)
	switch {
	case name == "throughput_mops":
		return func(r *bench.Result) (float64, bool) { return r.ThroughputMops, r.Ops > 0 }, nil
	case name == "cache_hit_ratio":
		return func(r *bench.Result) (float64, bool) { return r.CacheHitRatio, true }, nil
	case name == "cs_cache_bytes":
		return func(r *bench.Result) (float64, bool) { return float64(r.CSCacheBytes), true }, nil
	case name == "ms_bytes":
		return func(r *bench.Result) (float64, bool) { return float64(r.MSBytes), true }, nil
	case len(parts) == 3 && parts[0] == "latency":
		stat := map[string]func(l bench.LatencySummary) float64{
			"mean": func(l bench.LatencySummary) float64 { return l.Mean },
			"p50":  func(l bench.LatencySummary) float64 { return float64(l.P50) },
			"p90":  func(l bench.LatencySummary) float64 { return float64(l.P90) },
			"p99":  func(l bench.LatencySummary) float64 { return float64(l.P99) },
			"p999": func(l bench.LatencySummary) float64 { return float64(l.P999) },
			"p9999": func(l bench.LatencySummary) float64 {
				return float64(l.P9999)
			},
		}[parts[2]]
		if stat == nil {
			return nil, fail
		}
		return func(r *bench.Result) (float64, bool) {
			l, ok := r.Latency[parts[1]]
			return stat(l), ok
		}, nil
	case len(parts) == 3 && (parts[0] == "verbs_per_op" || parts[0] == "bytes_per_op"):
		verb := map[string]func(m bench.VerbMix) float64{
			"read": func(m bench.VerbMix) float64 { return m.Read }, "write": func(m bench.VerbMix) float64 { return m.Write },
			"cas": func(m bench.VerbMix) float64 { return m.CAS }, "masked_cas": func(m bench.VerbMix) float64 { return m.MaskedCAS },
			"faa": func(m bench.VerbMix) float64 { return m.FAA }, "rpc": func(m bench.VerbMix) float64 { return m.RPC },
			"total": func(m bench.VerbMix) float64 { return m.Total },
		}[parts[2]]
		if verb == nil {
			return nil, fail
		}
		return func(r *bench.Result) (float64, bool) {
			src := r.VerbsPerOp
			if parts[0] == "bytes_per_op" {
				src = r.BytesPerOp
			}
			m, ok := src[parts[1]]
			return verb(m), ok
		}, nil
	case len(parts) == 3 && slices.Contains([]string{"nic_mops", "msg_util", "bw_util", "cpu_util"}, parts[0]) &&
		(parts[1] == "memory" || parts[1] == "compute") && (parts[2] == "max" || parts[2] == "mean"):
		return func(r *bench.Result) (float64, bool) {
			var sum, top float64
			n := 0
			for _, nd := range r.Nodes {
				if nd.Role != parts[1] {
					continue
				}
				v := map[string]float64{"nic_mops": nd.NICMops, "msg_util": nd.MsgUtil, "bw_util": nd.BWUtil, "cpu_util": nd.CPUUtil}[parts[0]]
				sum, top, n = sum+v, max(top, v), n+1
			}
			if n == 0 {
				return 0, false
			}
			if parts[2] == "max" {
				return top, true
			}
			return sum / float64(n), true
		}, nil
	}
	return nil, fail
}
