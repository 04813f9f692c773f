package bench

import (
	"fmt"
	"time"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/combine"
	"github.com/dmbench/dmbench/transport"
)

// Result is everything one run measured. Its JSON form is the run's
// complete record (histograms included); CSVRow flattens it.
type Result struct {
	Index    string `json:"index"`
	Paper    string `json:"paper"`
	Workload string `json:"workload"`
	Fabric   string `json:"fabric"`
	Profile  string `json:"profile,omitempty"`

	// ThroughputMops is operations per second of the measured phase, in
	// millions: over virtual time on sim, wall time on local.
	ThroughputMops float64 `json:"throughput_mops"`
	Ops            int64   `json:"ops"`
	// Failed counts reads and updates that found no key the workload
	// expected, per operation type.
	Failed map[string]int64 `json:"failed"`
	// PhaseNs is how long the measured phase took: virtual ns on sim,
	// wall ns on real fabrics.
	PhaseNs int64 `json:"phase_ns"`
	// WallS, LoadWallS and WarmupWallS are the simulator's (or a real
	// fabric's) wall time for the measured phase, the load, and the
	// warm-up (reads of every record and warm-up operations).
	WallS       float64 `json:"wall_s"`
	LoadWallS   float64 `json:"load_wall_s"`
	WarmupWallS float64 `json:"warmup_wall_s"`
	// EventHash identifies the simulated run: equal for equal configs
	// and seeds (sim only).
	EventHash string `json:"event_hash,omitempty"`
	Events    uint64 `json:"events,omitempty"`
	// Model is the version of the simulated physics that produced the
	// run (cost.ModelVersion; sim only).
	Model int `json:"model,omitempty"`

	Latency    map[string]LatencySummary `json:"latency_ns"`
	VerbsPerOp map[string]VerbMix        `json:"verbs_per_op"`
	BytesPerOp map[string]VerbMix        `json:"bytes_per_op"`
	Nodes      []NodeResult              `json:"nodes"`

	// StepsNsPerOp is the time breakdown by the index's steps
	// (indexes.Spec.Steps, "other" for the unlabelled rest) and
	// ActivityNsPerOp by what the time went to (read, write, atomic, rpc,
	// compute, wait): mean ns per operation of each type, and over all
	// operations under "total". Measured by the simulator; absent on real
	// fabrics.
	StepsNsPerOp    map[string]map[string]float64 `json:"steps_ns_per_op,omitempty"`
	ActivityNsPerOp map[string]map[string]float64 `json:"activity_ns_per_op,omitempty"`

	// Timeline is the measured phase's throughput window by window, when
	// Config.TimelineNs asks for it; Changes are what the runner did to
	// the cluster meanwhile (a repartitioning).
	Timeline []Window `json:"timeline,omitempty"`
	Changes  []Change `json:"changes,omitempty"`

	// Combining is, for an index that serves concurrent operations on a
	// key together (indexes.Combiner), the sizes of the measured phase's
	// rounds: how many searches one remote read served, how many writes
	// one remote write.
	Combining *Combining `json:"combining,omitempty"`

	CacheHitRatio float64 `json:"cache_hit_ratio"`
	CSCacheBytes  uint64  `json:"cs_cache_bytes"`
	MSBytes       uint64  `json:"ms_bytes"`

	Config     ConfigRecord      `json:"config"`
	Histograms map[string]string `json:"histograms"`
}

// Combining is the round sizes of read delegation and write combining.
type Combining struct {
	Reads  RoundSizes `json:"reads"`
	Writes RoundSizes `json:"writes"`
}

// RoundSizes summarises rounds: how many ran, the operations they served,
// and their sizes' mean, median, 99th percentile and maximum.
type RoundSizes struct {
	Rounds uint64  `json:"rounds"`
	Ops    uint64  `json:"ops"`
	Mean   float64 `json:"mean"`
	P50    int     `json:"p50"`
	P99    int     `json:"p99"`
	Max    int     `json:"max"`
}

func roundSizes(s combine.Sizes) RoundSizes {
	return RoundSizes{Rounds: s.Rounds(), Ops: s.Ops(), Mean: s.Mean(), P50: s.Quantile(0.5), P99: s.Quantile(0.99), Max: s.Max()}
}

// Window is one window of the timeline: operations completed in
// [StartNs, EndNs) of the measured phase, and their rate. The last window
// may be shorter than the others.
type Window struct {
	StartNs int64   `json:"start_ns"`
	EndNs   int64   `json:"end_ns"`
	Ops     int64   `json:"ops"`
	Mops    float64 `json:"mops"`
}

// VerbMix is a per-operation average for each verb kind.
type VerbMix struct {
	Read      float64 `json:"read"`
	Write     float64 `json:"write"`
	CAS       float64 `json:"cas"`
	MaskedCAS float64 `json:"masked_cas"`
	FAA       float64 `json:"faa"`
	RPC       float64 `json:"rpc"`
	Total     float64 `json:"total"`
}

// NodeResult is one node's NIC and CPU over the measured phase.
type NodeResult struct {
	ID      int     `json:"id"`
	Role    string  `json:"role"`
	NICMops float64 `json:"nic_mops"` // messages per second handled by its NIC, millions
	NICGbps float64 `json:"nic_gbps"` // wire bits per second, both directions, billions
	MsgUtil float64 `json:"msg_util"`
	BWUtil  float64 `json:"bw_util"`
	CPUUtil float64 `json:"cpu_util"` // RPC cores
	// ThreadUtil is the client threads' busy share (compute nodes).
	ThreadUtil float64 `json:"thread_util"`
	RPCs       uint64  `json:"rpcs"`
}

// ConfigRecord is the run's configuration as recorded in results.
type ConfigRecord struct {
	Fabric       string            `json:"fabric"`
	Profile      string            `json:"profile,omitempty"`
	ComputeNodes int               `json:"compute_nodes"`
	MemoryNodes  int               `json:"memory_nodes"`
	Threads      int               `json:"threads"`
	Coroutines   int               `json:"coroutines"`
	MemoryCores  int               `json:"memory_cores"`
	ComputeCores int               `json:"compute_cores"`
	CacheBytes   uint64            `json:"cache_bytes"`
	MemoryBytes  uint64            `json:"memory_bytes"`
	Mode         string            `json:"mode"`
	Seed         uint64            `json:"seed"`
	Index        string            `json:"index"`
	Params       map[string]string `json:"params"`
	Workload     map[string]string `json:"workload"`
	MaxPhaseNs   int64             `json:"max_phase_ns,omitempty"`
}

func mix(c *transport.Counters, ops float64, bytes bool) VerbMix {
	v := func(k transport.VerbKind) float64 {
		if ops == 0 {
			return 0
		}
		if bytes {
			return float64(c[k].BytesOut+c[k].BytesIn) / ops
		}
		return float64(c[k].Count) / ops
	}
	m := VerbMix{Read: v(transport.VerbRead), Write: v(transport.VerbWrite), CAS: v(transport.VerbCAS),
		MaskedCAS: v(transport.VerbMaskedCAS), FAA: v(transport.VerbFAA), RPC: v(transport.VerbRPC)}
	m.Total = m.Read + m.Write + m.CAS + m.MaskedCAS + m.FAA + m.RPC
	return m
}

// result assembles the Result of the measured phase.
func (r *runner) result(rec *recorder, wall time.Duration, before indexes.Info) (*Result, error) {
	c := &r.cfg
	st := r.f.Stats()
	info := r.idx.Info()
	res := &Result{
		Index: c.Index, Paper: info.Paper, Workload: c.Workload.Name, Fabric: c.Fabric,
		PhaseNs: st.WindowNs, WallS: wall.Seconds(), LoadWallS: r.loadWall.Seconds(), WarmupWallS: r.warmupWall.Seconds(),
		Failed: map[string]int64{}, Latency: map[string]LatencySummary{},
		VerbsPerOp: map[string]VerbMix{}, BytesPerOp: map[string]VerbMix{}, Histograms: map[string]string{},
		CSCacheBytes: info.CacheBytes, MSBytes: info.MemoryBytes,
	}
	if c.Fabric == "sim" {
		res.Profile = c.Profile
		res.Model = cost.ModelVersion
	}
	// A real device's fabric names it and how masked CAS runs on it.
	if p, ok := r.f.(interface{ Profile() string }); ok {
		res.Profile = p.Profile()
	}
	if s, ok := r.f.(interface {
		EventHash() uint64
		Events() uint64
	}); ok {
		res.EventHash = fmt.Sprintf("%016x", s.EventHash())
		res.Events = s.Events()
	}
	for _, t := range opTypes {
		n := rec.ops[t]
		if n == 0 {
			continue
		}
		name := opName(t)
		res.Ops += n
		if rec.fails[t] > 0 {
			res.Failed[name] = rec.fails[t]
		}
		res.Latency[name] = summarize(rec.hists[t])
		enc, err := encodeHist(rec.hists[t])
		if err != nil {
			return nil, err
		}
		res.Histograms[name] = enc
		tag := transport.Tag(t) + 1
		tagged := &st.Verbs.ByTag[tag]
		res.VerbsPerOp[name] = mix(tagged, float64(n), false)
		res.BytesPerOp[name] = mix(tagged, float64(n), true)
		r.breakdown(res, name, &st.Verbs.Time, tag, float64(n))
	}
	r.breakdown(res, "total", sumOps(&st.Verbs.Time), 0, float64(res.Ops))
	res.Timeline = timeline(rec, st.WindowNs, c.MaxPhaseNs)
	res.Changes = r.changes
	total := st.Verbs.Total()
	res.VerbsPerOp["total"] = mix(&total, float64(res.Ops), false)
	res.BytesPerOp["total"] = mix(&total, float64(res.Ops), true)
	if st.WindowNs > 0 {
		res.ThroughputMops = float64(res.Ops) / float64(st.WindowNs) * 1e3
	}
	secs := float64(st.WindowNs) / 1e9
	for i, n := range st.Nodes {
		msg, bw, cpu, threads := st.Utilisation(i)
		nr := NodeResult{ID: int(n.ID), Role: n.Role.String(), MsgUtil: msg, BWUtil: bw, CPUUtil: cpu, ThreadUtil: threads, RPCs: n.RPCs}
		if secs > 0 {
			nr.NICMops = float64(n.Msgs) / secs / 1e6
			nr.NICGbps = float64(n.BytesTx+n.BytesRx) * 8 / secs / 1e9
		}
		res.Nodes = append(res.Nodes, nr)
	}
	if cb, ok := r.idx.(indexes.Combiner); ok {
		reads, writes := cb.CombiningSizes()
		res.Combining = &Combining{Reads: roundSizes(reads.Since(r.combined[0])), Writes: roundSizes(writes.Since(r.combined[1]))}
	}
	if hits, looks := info.CacheHits-before.CacheHits, info.CacheLookups-before.CacheLookups; looks > 0 {
		res.CacheHitRatio = float64(hits) / float64(looks)
	}
	res.Config = ConfigRecord{
		Fabric: c.Fabric, Profile: res.Profile, ComputeNodes: c.ComputeNodes, MemoryNodes: c.MemoryNodes,
		Threads: c.Threads, Coroutines: c.Coroutines, MemoryCores: c.MemoryCores, ComputeCores: c.ComputeCores,
		CacheBytes: c.CacheBytes, MemoryBytes: c.memoryBytes(), Mode: c.Mode.String(), Seed: c.Seed,
		Index: c.Index, Params: info.Params, Workload: c.Workload.Properties(), MaxPhaseNs: c.MaxPhaseNs,
	}
	return res, nil
}

// breakdown adds operation type name's time breakdowns to res, if the
// fabric measured any.
func (r *runner) breakdown(res *Result, name string, ts *transport.TimeStats, tag transport.Tag, ops float64) {
	var total int64
	for _, d := range ts.Activity[tag] {
		total += d
	}
	if total == 0 {
		return
	}
	if res.StepsNsPerOp == nil {
		res.StepsNsPerOp, res.ActivityNsPerOp = map[string]map[string]float64{}, map[string]map[string]float64{}
	}
	acts := map[string]float64{}
	for a, d := range ts.Activity[tag] {
		acts[transport.Activity(a).String()] = float64(d) / ops
	}
	res.ActivityNsPerOp[name] = acts
	spec, _ := indexes.Lookup(r.cfg.Index) // validated
	steps := map[string]float64{"other": float64(ts.Steps[tag][0]) / ops}
	for i, step := range spec.Steps {
		steps[step] = float64(ts.Steps[tag][i+1]) / ops
	}
	res.StepsNsPerOp[name] = steps
}

// timeline turns the recorder's window counts into rates over a phase of
// phaseNs. With a cap, windows from the cap on are left out: they hold
// only the operations in flight when clients stopped issuing, and their
// rate would show a drop that is the end of the run, not the index.
func timeline(rec *recorder, phaseNs, cap int64) []Window {
	var ws []Window
	for i, n := range rec.ticks {
		start := int64(i) * rec.window
		if cap > 0 && start >= cap {
			break
		}
		length := min(rec.window, phaseNs-start)
		if cap > 0 {
			length = min(length, cap-start)
		}
		w := Window{StartNs: start, EndNs: start + max(length, 0), Ops: n}
		if length > 0 {
			w.Mops = float64(n) / float64(length) * 1e3
		}
		ws = append(ws, w)
	}
	return ws
}

// sumOps gathers the time of every operation type under tag 0.
func sumOps(ts *transport.TimeStats) *transport.TimeStats {
	var all transport.TimeStats
	for _, t := range opTypes {
		tag := transport.Tag(t) + 1
		for a, d := range ts.Activity[tag] {
			all.Activity[0][a] += d
		}
		for st, d := range ts.Steps[tag] {
			all.Steps[0][st] += d
		}
	}
	return &all
}
