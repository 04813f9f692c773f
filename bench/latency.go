package bench

import (
	"fmt"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dmbench/dmbench/workloads"
)

// Histogram bounds: 1 ns to 100 s at 3 significant digits (an RDMA verb
// takes about 2 us, a stalled lock holder can make an operation wait many
// milliseconds).
const (
	histMin    = 1
	histMax    = 100e9
	histDigits = 3
)

// opTypes are the operation types the runner records, in tag order: a
// client tags its verbs with 1 + the operation type, leaving tag 0 for
// verbs outside any operation.
var opTypes = []workloads.OpType{workloads.Read, workloads.Update, workloads.Insert, workloads.Scan, workloads.ReadModifyWrite, workloads.Delete}

// opName is the name results use for an operation type: go-ycsb's.
func opName(t workloads.OpType) string { return t.String() }

// recorder keeps one latency histogram per operation type. It is not safe
// for concurrent use: on sim all clients share one (one coroutine runs at a
// time), on local each client has its own and they are merged at the end.
type recorder struct {
	hists [numOps]*hdrhistogram.Histogram
	ops   [numOps]int64
	fails [numOps]int64
	// window, when positive, is the timeline's window in ns; ticks[i]
	// counts the operations that completed in window i.
	window int64
	ticks  []int64
}

// numOps is the number of operation types.
const numOps = int(workloads.Delete) + 1

func newRecorder(window int64) *recorder {
	r := &recorder{window: window}
	for i := range r.hists {
		r.hists[i] = hdrhistogram.New(histMin, histMax, histDigits)
	}
	return r
}

func (r *recorder) record(t workloads.OpType, ns int64, failed bool) {
	r.ops[t]++
	if failed {
		r.fails[t]++
	}
	// Values beyond the range are clamped rather than dropped: a lost
	// sample would bias the tail the histogram exists to show.
	r.hists[t].RecordValue(min(max(ns, histMin), histMax))
}

// tick counts an operation that completed at ns into the phase.
func (r *recorder) tick(at int64) {
	if r.window <= 0 {
		return
	}
	i := int(at / r.window)
	for len(r.ticks) <= i {
		r.ticks = append(r.ticks, 0)
	}
	r.ticks[i]++
}

func (r *recorder) merge(o *recorder) {
	for i := range r.hists {
		r.hists[i].Merge(o.hists[i])
		r.ops[i] += o.ops[i]
		r.fails[i] += o.fails[i]
	}
	for len(r.ticks) < len(o.ticks) {
		r.ticks = append(r.ticks, 0)
	}
	for i, n := range o.ticks {
		r.ticks[i] += n
	}
}

// LatencySummary is one operation type's latency distribution in ns.
type LatencySummary struct {
	Count int64   `json:"count"`
	Mean  float64 `json:"mean"`
	P50   int64   `json:"p50"`
	P90   int64   `json:"p90"`
	P99   int64   `json:"p99"`
	P999  int64   `json:"p999"`
	P9999 int64   `json:"p9999"`
	Max   int64   `json:"max"`
}

func summarize(h *hdrhistogram.Histogram) LatencySummary {
	return LatencySummary{
		Count: h.TotalCount(), Mean: h.Mean(),
		P50: h.ValueAtQuantile(50), P90: h.ValueAtQuantile(90), P99: h.ValueAtQuantile(99),
		P999: h.ValueAtQuantile(99.9), P9999: h.ValueAtQuantile(99.99), Max: h.Max(),
	}
}

// encodeHist is the histogram in HdrHistogram's compressed V2 encoding
// (base64 text, "HISTF..."): readable by any HdrHistogram implementation.
func encodeHist(h *hdrhistogram.Histogram) (string, error) {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encode histogram: %w", err)
	}
	return string(b), nil
}

// DecodeHistogram reverses the encoding of Result.Histograms.
func DecodeHistogram(s string) (*hdrhistogram.Histogram, error) {
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return h, nil
}
