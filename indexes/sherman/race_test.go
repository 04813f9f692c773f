//go:build race

package sherman

// scale shrinks the simulated workloads under the race detector, which
// slows them tenfold without adding anything to check: the simulator runs
// one client at a time. The local-fabric workloads keep their size.
const scale = 4
