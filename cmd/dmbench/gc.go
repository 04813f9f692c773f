package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// gcPercent is the collector's target heap growth for a run. A simulated
// run keeps a large, long-lived heap (the index's caches, every client's
// state, the workload's key space) and allocates at a high rate on top of
// it, so at Go's default of 100 the collector rescans that heap after
// every doubling: 15-25% of the CPU at 10^6 records. 400 lets the heap
// grow fivefold between collections; the memory limit below caps it.
const gcPercent = 400

// gcHeadroom bounds the garbage a heap may gather between collections.
// Fivefold growth is cheap for the tens of megabytes a run keeps live at
// 10^6 records, but at 10^7 an index keeps 0.5-1 GB live, and fivefold
// growth would put gigabytes of garbage on top of the regions: the
// resident memory, not the work, would then decide whether a large run
// fits a laptop. Past 128 MiB of live heap the growth shrinks so that
// the garbage stays under this bound, down to Go's default of 100.
const gcHeadroom = 512 << 20

// growthFor is the GC percent for a live heap of live bytes: gcPercent
// while that growth stays under gcHeadroom, Go's default 100 at least.
func growthFor(live uint64) int {
	if live == 0 {
		return gcPercent
	}
	return int(max(100, min(gcPercent, gcHeadroom*100/live)))
}

// tuneGC sets the garbage collector for simulation runs: growth growthFor
// the live heap, set anew after every collection, and a soft memory limit
// of half the machine's memory, which makes the collector run sooner, not
// the run fail, when the heap nears it. Half leaves room for a second run
// on the same machine and for the regions, which are mapped outside the
// Go heap. The GOGC and GOMEMLIMIT environment variables, when set, win,
// as the runtime documents.
func tuneGC() {
	if _, ok := os.LookupEnv("GOGC"); !ok {
		debug.SetGCPercent(gcPercent)
		t := &gcTuner{percent: gcPercent, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
		t.arm()
	}
	if _, ok := os.LookupEnv("GOMEMLIMIT"); !ok {
		if total := physicalMemory(); total > 0 {
			debug.SetMemoryLimit(int64(total / 2))
		}
	}
}

// gcTuner sets the GC percent after each collection from the live heap
// the collection measured.
type gcTuner struct {
	percent int
	sample  []metrics.Sample
}

// gcSentinel is an object the tuner drops so that its finalizer runs
// after the next collection; 16 bytes keep it out of the tiny allocator,
// whose blocks free (and finalize) late.
type gcSentinel struct{ _ [16]byte }

// arm has the next collection call adjust.
func (t *gcTuner) arm() {
	runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) {
		t.adjust()
		t.arm()
	})
}

// adjust sets the GC percent for the live heap, and only when it changes:
// SetGCPercent stops the world briefly.
func (t *gcTuner) adjust() {
	metrics.Read(t.sample)
	if t.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	if p := growthFor(t.sample[0].Value.Uint64()); p != t.percent {
		t.percent = p
		debug.SetGCPercent(p)
	}
}
