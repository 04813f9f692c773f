// Package bench is dmbench's runner: cluster shape -> fabric -> index ->
// clients -> phases -> Result. It alone knows about workloads; the
// indexes know only transport, and the fabric alone knows about time.
//
// A run builds the fabric (sim or local) and the index, bulk-loads the
// workload's records through a setup endpoint (direct memory writes, no
// simulated time), runs a warm-up phase and then the measured phase, each
// with every client (compute nodes x threads x coroutines) drawing from its
// own seeded operation stream. Throughput is operations over the measured
// phase's duration: virtual time on sim, wall time on local. Latencies go
// into HdrHistograms in nanoseconds; verbs and bytes are attributed to the
// operation type through the endpoint's tag.
package bench
