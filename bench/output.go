package bench

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/dustin/go-humanize"

	"github.com/dmbench/dmbench/internal/atomicfile"
)

// WriteFileAtomic writes data to path so that a reader never sees a
// partial file (see package atomicfile).
func WriteFileAtomic(path string, data []byte) error { return atomicfile.Write(path, data) }

// JSON is the result as indented JSON.
func (r *Result) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	return append(b, '\n'), nil
}

// ReadResult reads a result written by WriteJSON; a broken file is an
// error naming it.
func ReadResult(path string) (*Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Result
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("result file %s is not a dmbench result: %w", path, err)
	}
	return &r, nil
}

// csvOps are the operation types given latency columns in the CSV; DELETE
// comes only from trace replays.
var csvOps = []string{"READ", "UPDATE", "INSERT", "SCAN", "READ_MODIFY_WRITE", "DELETE"}

// CSVHeader names the columns of CSVRow.
func CSVHeader() []string {
	h := []string{"index", "params", "workload", "fabric", "profile", "compute_nodes", "memory_nodes",
		"threads", "coroutines", "memory_cores", "cache_bytes", "mode", "seed",
		"throughput_mops", "ops", "failed", "phase_ns", "wall_s", "event_hash",
		"verbs_per_op", "bytes_per_op", "cache_hit_ratio", "cs_cache_bytes", "ms_bytes",
		"mem_msg_util", "mem_bw_util", "mem_cpu_util", "compute_msg_util"}
	for _, op := range csvOps {
		h = append(h, strings.ToLower(op)+"_p50_ns", strings.ToLower(op)+"_p99_ns")
	}
	return h
}

// CSVRow flattens the result into one row under CSVHeader. Node columns
// give the busiest memory node and the busiest compute node.
func (r *Result) CSVRow() []string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
	u := func(x uint64) string { return strconv.FormatUint(x, 10) }
	i := func(x int) string { return strconv.Itoa(x) }
	var failed int64
	for _, n := range r.Failed {
		failed += n
	}
	var memMsg, memBW, memCPU, compMsg float64
	for _, n := range r.Nodes {
		if n.Role == "memory" {
			memMsg, memBW, memCPU = max(memMsg, n.MsgUtil), max(memBW, n.BWUtil), max(memCPU, n.CPUUtil)
		} else {
			compMsg = max(compMsg, n.MsgUtil)
		}
	}
	params := make([]string, 0, len(r.Config.Params))
	for _, k := range sortedKeys(r.Config.Params) {
		params = append(params, k+"="+r.Config.Params[k])
	}
	c := &r.Config
	row := []string{r.Index, strings.Join(params, ";"), r.Workload, r.Fabric, r.Profile,
		i(c.ComputeNodes), i(c.MemoryNodes), i(c.Threads), i(c.Coroutines), i(c.MemoryCores),
		u(c.CacheBytes), c.Mode, u(c.Seed),
		f(r.ThroughputMops), strconv.FormatInt(r.Ops, 10), strconv.FormatInt(failed, 10),
		strconv.FormatInt(r.PhaseNs, 10), f(r.WallS), r.EventHash,
		f(r.VerbsPerOp["total"].Total), f(r.BytesPerOp["total"].Total), f(r.CacheHitRatio),
		u(r.CSCacheBytes), u(r.MSBytes), f(memMsg), f(memBW), f(memCPU), f(compMsg)}
	for _, op := range csvOps {
		if l, ok := r.Latency[op]; ok {
			row = append(row, strconv.FormatInt(l.P50, 10), strconv.FormatInt(l.P99, 10))
		} else {
			row = append(row, "", "")
		}
	}
	return row
}

// WriteCSV writes a header and one row per result to path, atomically.
func WriteCSV(path string, results []*Result) error {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(CSVHeader())
	for _, r := range results {
		w.Write(r.CSVRow())
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return WriteFileAtomic(path, b.Bytes())
}

// Summary prints a short human-readable account of the result.
func (r *Result) Summary(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "%s on %s (%s", r.Index, r.Workload, r.Fabric)
	if r.Profile != "" {
		fmt.Fprintf(tw, ", %s", r.Profile)
	}
	fmt.Fprintf(tw, "): %.3f Mops over %d ops", r.ThroughputMops, r.Ops)
	if r.Fabric == "sim" {
		fmt.Fprintf(tw, " in %.3f ms virtual, %.2f s wall; event hash %s", float64(r.PhaseNs)/1e6, r.WallS, r.EventHash)
		fmt.Fprintf(tw, "\nsimulator wall time: load %.2f s, warm-up %.2f s, measured phase %.2f s", r.LoadWallS, r.WarmupWallS, r.WallS)
		if r.WallS > 0 {
			verbs := r.VerbsPerOp["total"].Total * float64(r.Ops)
			fmt.Fprintf(tw, " (%.3f M ops and %.3f M verbs per wall second)", float64(r.Ops)/r.WallS/1e6, verbs/r.WallS/1e6)
		}
	} else {
		fmt.Fprintf(tw, " in %.2f s", r.WallS)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "op\tcount\tfailed\tmean us\tp50 us\tp99 us\tp99.9 us\tverbs/op\tbytes/op")
	for _, op := range csvOps {
		l, ok := r.Latency[op]
		if !ok {
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.0f\n", op, l.Count, r.Failed[op],
			l.Mean/1e3, float64(l.P50)/1e3, float64(l.P99)/1e3, float64(l.P999)/1e3,
			r.VerbsPerOp[op].Total, r.BytesPerOp[op].Total)
	}
	fmt.Fprintln(tw, "node\trole\tNIC Mops\tNIC Gb/s\tmsg util\tlink util\tcpu util")
	for _, n := range r.Nodes {
		fmt.Fprintf(tw, "%d\t%s\t%.2f\t%.2f\t%.0f%%\t%.0f%%\t%.0f%%\n", n.ID, n.Role, n.NICMops, n.NICGbps, n.MsgUtil*100, n.BWUtil*100, n.CPUUtil*100)
	}
	if r.CSCacheBytes > 0 || r.CacheHitRatio > 0 {
		fmt.Fprintf(tw, "cache: %.1f%% hits; compute-side %s in use over %d compute nodes (budget %s per node); memory-side %s\n",
			r.CacheHitRatio*100, sizeText(r.CSCacheBytes), r.Config.ComputeNodes, sizeText(r.Config.CacheBytes), sizeText(r.MSBytes))
	}
	if cb := r.Combining; cb != nil {
		for _, side := range []struct {
			name string
			s    RoundSizes
		}{{"read delegation", cb.Reads}, {"write combining", cb.Writes}} {
			if side.s.Rounds > 0 {
				fmt.Fprintf(tw, "%s: %d rounds served %d ops; round size mean %.2f, p50 %d, p99 %d, max %d\n",
					side.name, side.s.Rounds, side.s.Ops, side.s.Mean, side.s.P50, side.s.P99, side.s.Max)
			}
		}
	}
	breakdown(tw, "time per op (us)", r.ActivityNsPerOp)
	if len(r.StepsNsPerOp) > 0 && len(r.StepsNsPerOp[firstKey(r.StepsNsPerOp)]) > 1 {
		breakdown(tw, "index steps per op (us)", r.StepsNsPerOp)
	}
	for _, c := range r.Changes {
		fmt.Fprintf(tw, "%s from %.3f to %.3f ms: %s\n", c.Name, float64(c.StartNs)/1e6, float64(c.EndNs)/1e6, c.Detail)
	}
	if len(r.Timeline) > 0 {
		fmt.Fprint(tw, "timeline (Mops per window):")
		for _, w := range r.Timeline {
			fmt.Fprintf(tw, " %.2f", w.Mops)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// breakdown prints a time breakdown as a table of operations by parts.
func breakdown(tw io.Writer, title string, m map[string]map[string]float64) {
	if len(m) == 0 {
		return
	}
	parts := sortedKeys(m[firstKey(m)])
	fmt.Fprintf(tw, "%s\t%s\n", title, strings.Join(parts, "\t"))
	for _, op := range csvOps {
		row, ok := m[op]
		if !ok {
			continue
		}
		fmt.Fprint(tw, op)
		for _, p := range parts {
			fmt.Fprintf(tw, "\t%.2f", row[p]/1e3)
		}
		fmt.Fprintln(tw)
	}
}

// firstKey is the smallest key of m, for a deterministic pick.
func firstKey[V any](m map[string]V) string {
	return slices.Min(slices.Collect(maps.Keys(m)))
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// sizeText writes a byte count exactly and, from 1 KiB up, in binary units
// as the papers mean their MB and GB.
func sizeText(b uint64) string {
	if b < 1<<10 {
		return fmt.Sprintf("%d B", b)
	}
	return fmt.Sprintf("%d B (%s)", b, humanize.IBytes(b))
}
