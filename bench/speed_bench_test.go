package bench

import (
	"runtime"
	"strconv"
	"syscall"
	"testing"

	_ "github.com/dmbench/dmbench/indexes/dex"
	_ "github.com/dmbench/dmbench/indexes/dmtree"
	_ "github.com/dmbench/dmbench/indexes/ideal"
	_ "github.com/dmbench/dmbench/indexes/sherman"
	"github.com/dmbench/dmbench/workloads"
)

// cpuSeconds is the process's user and system CPU time so far: on a
// shared machine it varies far less than wall time.
func cpuSeconds(tb testing.TB) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// heapObjects is how many heap objects the process has allocated so far.
func heapObjects() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Mallocs
}

// BenchmarkWholeRun is a whole run in the shape of DMTree's evaluation
// (6 compute nodes x 72 threads x 4 coroutines, one memory node with one
// core, uniform searches of 24-byte keys) for the Expected bound and the
// three B+-tree designs the simulator's speed matters most for. It
// reports simulated operations of the measured phase per CPU second of
// the whole run (bulk load included, so the load stays small against the
// operations) and per wall second of the measured phase alone, and the
// allocations per simulated operation.
func BenchmarkWholeRun(b *testing.B) {
	const records, ops = 100_000, 600_000
	for _, index := range []string{"ideal", "sherman", "dmtree", "dex"} {
		b.Run(index, func(b *testing.B) {
			w, err := workloads.Builtin("dmtree-search-only", workloads.Properties{
				"recordcount": strconv.Itoa(records), "operationcount": strconv.Itoa(ops),
				"requestdistribution": "uniform", "warmupreadall": "false",
			})
			if err != nil {
				b.Fatal(err)
			}
			c := Default()
			c.Index, c.Workload = index, w
			var simOps int64
			var mallocs uint64
			var cpu, wall float64
			for b.Loop() {
				c0, m0 := cpuSeconds(b), heapObjects()
				res, err := Run(c)
				if err != nil {
					b.Fatal(err)
				}
				cpu += cpuSeconds(b) - c0
				mallocs += heapObjects() - m0
				wall += res.WallS
				simOps += res.Ops
			}
			b.ReportMetric(float64(simOps)/cpu, "ops/cpu-s")
			b.ReportMetric(float64(simOps)/wall, "phase-ops/wall-s")
			b.ReportMetric(float64(mallocs)/float64(simOps), "allocs/sim-op")
		})
	}
}
