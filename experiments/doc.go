// Package experiments is dmbench's figure catalog:
// one spec per reproducible figure or table of the four papers, each with
// the paper's cluster shape and hardware profile, its workloads, the swept
// axis, the series (indexes and variants), scale presets, and the claims
// the paper's text makes about it.
//
// A spec is a YAML file under specs/<paper>/<figure>.yaml (embedded in the
// binary; `dmbench sweep --spec FILE` takes any file of the same form).
// Expand turns a spec at a scale into points, one run each (Replicates
// repeats them under more seeds, and reports take the mean); Sweep runs
// them in parallel, keeping each finished run's JSON so an interrupted
// sweep resumes where it stopped; Evaluate checks the claims against the
// runs. A series whose index is not implemented yet is reported as
// missing, never dropped silently; a point whose workload replays a trace
// that is not at hand (Inputs.TraceDir) "needs input": it is not run, and
// its status names the file to fetch, while the rest of the figure runs.
//
// Scaling: the papers load 10^7 to 10^9 records; a scale preset loads
// fewer. Sizes that the papers give relative to their data (compute-side
// cache) scale with the record count: a spec states the paper's record
// count and cache size, and a run gets cache = paper cache x records /
// paper records. Claims are data fixed before the runs; a claim that does
// not hold is reported as missed, never loosened after the fact.
package experiments
