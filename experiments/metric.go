package experiments

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dmbench/dmbench/bench"
)

// A metric reads one number from a result.
type metric func(r *bench.Result) (float64, bool)

// metricFor is the metric a point of category x in panel shows: {x} in
// the panel's metric, or else the spec's, is replaced by the category (a
// percentile, or on a metric axis a part of a metric name), and without
// {x} it is that metric. On a metric axis without a panel metric the
// category names the metric.
func (s *Spec) metricFor(panel, x string) (metric, error) {
	return metricOf(s.metricName(panel, x))
}

// metricName is the name of the metric metricFor returns.
func (s *Spec) metricName(panel, x string) string {
	name := s.Metric
	if s.X.Name == "metric" {
		name = "{x}"
	}
	for _, p := range s.Panels {
		if p.Name == panel && p.Metric != "" {
			name = p.Metric
		}
	}
	return strings.ReplaceAll(name, "{x}", x)
}

// Metric names:
//
//	throughput_mops
//	latency.<OP>.<mean|p50|p90|p99|p999|p9999>   OP: READ, UPDATE, INSERT, SCAN, READ_MODIFY_WRITE
//	verbs_per_op.<OP|total>.<read|write|cas|masked_cas|faa|atomic|rpc|total>   atomic: cas + masked_cas + faa
//	bytes_per_op.<OP|total>.<read|write|cas|masked_cas|faa|atomic|rpc|total>
//	nic_mops.<memory|compute>.<max|mean>, msg_util.<...>, bw_util.<...>, cpu_util.<...>
//	cache_hit_ratio, cs_cache_bytes, ms_bytes
//	activity.<OP>.<read|write|atomic|rpc|compute|wait>   ns per operation
//	steps.<OP>.<step>                                     ns per operation in an index's step (its Spec.Steps, or other)
//	timeline.<before|dip|end>_mops                        mean before the first change, lowest window from it on, mean of the last fifth
//	change.<name>.<start_ms|end_ms|duration_ms>           a change the runner made (repartition)
//	combining.<reads|writes>.<mean|p50|p99|max|rounds>    round sizes of read delegation and write combining
func metricOf(name string) (metric, error) {
	parts := strings.Split(name, ".")
	fail := fmt.Errorf("metric %q is not one of: throughput_mops, latency.<OP>.<stat>, verbs_per_op.<OP>.<verb>, bytes_per_op.<OP>.<verb> (verb: read, write, cas, masked_cas, faa, atomic, rpc, total), <nic_mops|msg_util|bw_util|cpu_util>.<memory|compute>.<max|mean>, cache_hit_ratio, cs_cache_bytes, ms_bytes, activity.<OP>.<activity>, steps.<OP>.<step>, timeline.<before|dip|end>_mops, change.<name>.<start_ms|end_ms|duration_ms>, combining.<reads|writes>.<mean|p50|p99|max|rounds>", name)
	switch {
	case len(parts) == 3 && parts[0] == "activity" && slices.Contains(activities, parts[2]),
		len(parts) == 3 && parts[0] == "steps" && parts[2] != "":
		return func(r *bench.Result) (float64, bool) {
			src := r.ActivityNsPerOp
			if parts[0] == "steps" {
				src = r.StepsNsPerOp
			}
			v, ok := src[parts[1]][parts[2]]
			return v, ok
		}, nil
	case len(parts) == 2 && parts[0] == "timeline" && slices.Contains([]string{"before_mops", "dip_mops", "end_mops"}, parts[1]):
		return func(r *bench.Result) (float64, bool) { return timelineStat(r, parts[1]) }, nil
	case len(parts) == 3 && parts[0] == "change" && slices.Contains([]string{"start_ms", "end_ms", "duration_ms"}, parts[2]):
		return func(r *bench.Result) (float64, bool) {
			for _, c := range r.Changes {
				if c.Name == parts[1] {
					return map[string]float64{"start_ms": float64(c.StartNs) / 1e6, "end_ms": float64(c.EndNs) / 1e6,
						"duration_ms": float64(c.EndNs-c.StartNs) / 1e6}[parts[2]], true
				}
			}
			return 0, false
		}, nil
	case name == "throughput_mops":
		return func(r *bench.Result) (float64, bool) { return r.ThroughputMops, r.Ops > 0 }, nil
	case len(parts) == 3 && parts[0] == "combining" && (parts[1] == "reads" || parts[1] == "writes") &&
		slices.Contains([]string{"mean", "p50", "p99", "max", "rounds"}, parts[2]):
		return func(r *bench.Result) (float64, bool) {
			if r.Combining == nil {
				return 0, false
			}
			rs := r.Combining.Reads
			if parts[1] == "writes" {
				rs = r.Combining.Writes
			}
			return map[string]float64{"mean": rs.Mean, "p50": float64(rs.P50), "p99": float64(rs.P99),
				"max": float64(rs.Max), "rounds": float64(rs.Rounds)}[parts[2]], true
		}, nil
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
			"atomic": func(m bench.VerbMix) float64 { return m.CAS + m.MaskedCAS + m.FAA },
			"total":  func(m bench.VerbMix) float64 { return m.Total },
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

// activities are the names of transport's activities.
var activities = []string{"read", "write", "atomic", "rpc", "compute", "wait"}

// timelineStat summarises a run's timeline: the mean rate of the windows
// that end before the first change, the lowest rate from the window the
// change starts in on, or the mean of the last fifth of the whole windows.
func timelineStat(r *bench.Result, stat string) (float64, bool) {
	ws := r.Timeline
	if n := len(ws); n > 1 && ws[n-1].EndNs-ws[n-1].StartNs < ws[0].EndNs-ws[0].StartNs {
		ws = ws[:n-1] // a partial last window
	}
	if len(ws) == 0 {
		return 0, false
	}
	change := int64(math.MaxInt64)
	if len(r.Changes) > 0 {
		change = r.Changes[0].StartNs
	}
	mean := func(ws []bench.Window) (float64, bool) {
		if len(ws) == 0 {
			return 0, false
		}
		var sum float64
		for _, w := range ws {
			sum += w.Mops
		}
		return sum / float64(len(ws)), true
	}
	switch stat {
	case "before_mops":
		n := 0
		for n < len(ws) && ws[n].EndNs <= change {
			n++
		}
		return mean(ws[:n])
	case "dip_mops":
		low, ok := math.Inf(1), false
		for _, w := range ws {
			if w.EndNs > change {
				low, ok = min(low, w.Mops), true
			}
		}
		return low, ok
	}
	return mean(ws[len(ws)-max(1, len(ws)/5):])
}
