package main

import (
	"os"
	"runtime/debug"
)

// gcPercent is the collector's target heap growth for a run. A simulated
// run keeps a large, long-lived heap (the index's caches, every client's
// state, the workload's key space) and allocates at a high rate on top of
// it, so at Go's default of 100 the collector rescans that heap after
// every doubling: 15-25% of the CPU at 10^6 records. 400 lets the heap
// grow fivefold between collections; the memory limit below caps it.
const gcPercent = 400

// tuneGC sets the garbage collector for simulation runs: growth gcPercent
// and a soft memory limit of half the machine's memory, which makes the
// collector run sooner, not the run fail, when the heap nears it. Half
// leaves room for a second run on the same machine and for the regions,
// which are mapped outside the Go heap. The GOGC and GOMEMLIMIT
// environment variables, when set, win, as the runtime documents.
func tuneGC() {
	if _, ok := os.LookupEnv("GOGC"); !ok {
		debug.SetGCPercent(gcPercent)
	}
	if _, ok := os.LookupEnv("GOMEMLIMIT"); !ok {
		if total := physicalMemory(); total > 0 {
			debug.SetMemoryLimit(int64(total / 2))
		}
	}
}
