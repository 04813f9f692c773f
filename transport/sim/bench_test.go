package sim

import (
	"testing"

	"github.com/dmbench/dmbench/transport"
)

// closedReads runs a closed loop: every client issues reads READs of size
// bytes to random addresses of memory node 0.
func closedReads(tb testing.TB, prof Profile, computeNodes, threads, coroutines, reads, size int) *Fabric {
	tb.Helper()
	cfg := transport.Config{
		ComputeNodes: computeNodes, MemoryNodes: 1, Threads: threads,
		MemoryCores: 1, ComputeCores: 1, MemoryBytes: 64 << 20, Seed: 1,
	}
	f, err := New(cfg, prof)
	if err != nil {
		tb.Fatal(err)
	}
	main, err := f.Region(0, "main")
	if err != nil {
		tb.Fatal(err)
	}
	slots := main.Size/uint64(size) - 1
	for _, n := range cfg.ComputeNodeIDs() {
		for th := range threads {
			for range coroutines {
				f.Go(n, th, func(ep transport.Endpoint) {
					buf := make([]byte, size)
					for range reads {
						a := main.Base.Add(ep.Rand().Uint64N(slots) * uint64(size))
						if err := ep.Read(buf, a); err != nil {
							panic(err)
						}
					}
				})
			}
		}
	}
	if err := f.Run(); err != nil {
		tb.Fatal(err)
	}
	return f
}

// BenchmarkSimulatorReads reports simulated verbs per wall-clock second
// for the DMTree cluster: 6 compute nodes x 72 threads x 4 coroutines.
func BenchmarkSimulatorReads(b *testing.B) {
	const perClient = 2000
	var verbs, simNs int64
	for b.Loop() {
		f := closedReads(b, CX6, 6, 72, 4, perClient, 8)
		st := f.Stats()
		verbs += int64(st.Verbs.Total().Verbs())
		simNs += st.WindowNs
	}
	b.ReportMetric(float64(verbs)/b.Elapsed().Seconds(), "verbs/s")
	b.ReportMetric(float64(verbs)/float64(simNs)*1e3, "sim-Mops")
}

// BenchmarkSimulatorReadsSmall is the same loop with 144 clients.
func BenchmarkSimulatorReadsSmall(b *testing.B) {
	var verbs int64
	for b.Loop() {
		f := closedReads(b, CX6, 6, 6, 4, 20000, 8)
		st := f.Stats()
		verbs += int64(st.Verbs.Total().Verbs())
	}
	b.ReportMetric(float64(verbs)/b.Elapsed().Seconds(), "verbs/s")
}

// BenchmarkLargeRegion builds a fabric with a 4 GiB memory-node region,
// touches 64 MiB of it through verbs, and reports the peak RSS.
func BenchmarkLargeRegion(b *testing.B) {
	for b.Loop() {
		cfg := transport.Config{ComputeNodes: 1, MemoryNodes: 1, Threads: 4, MemoryCores: 1, ComputeCores: 1, MemoryBytes: 4 << 30, Seed: 1}
		f, err := New(cfg, CX6)
		if err != nil {
			b.Fatal(err)
		}
		m, _ := f.Region(0, "main")
		for th := range 4 {
			f.Go(1, th, func(ep transport.Endpoint) {
				buf := make([]byte, 1024)
				for i := range 16 << 10 {
					if err := ep.Write(m.Base.Add(uint64(th)<<30+uint64(i)*1024), buf); err != nil {
						panic(err)
					}
				}
			})
		}
		if err := f.Run(); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
	b.ReportMetric(float64(peakRSS())/(1<<20), "peak-RSS-MiB")
}

// BenchmarkSimulatorLineRate is the closed loop with 1 KB READs: the
// memory node's link saturates, and the metric is its egress in GB/s.
func BenchmarkSimulatorLineRate(b *testing.B) {
	var bytes, simNs int64
	for b.Loop() {
		f := closedReads(b, CX6, 6, 72, 4, 20, 1024)
		st := f.Stats()
		bytes += int64(st.Nodes[0].BytesTx)
		simNs += st.WindowNs
	}
	b.ReportMetric(float64(bytes)/float64(simNs), "mem-egress-GB/s")
}
