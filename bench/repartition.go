package bench

import (
	"fmt"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/workloads"
)

// Change is something the runner did to the cluster during the measured
// phase, in ns from its start.
type Change struct {
	Name    string `json:"name"`
	StartNs int64  `json:"start_ns"`
	EndNs   int64  `json:"end_ns"`
	Detail  string `json:"detail"`
}

// repartition is the body of the thread that carries out the run's
// repartitioning: it sleeps until the planned time, has the index move the
// keys, then points the clients of both nodes at their new ranges and lets
// the spare's clients go.
func (r *runner) repartition(ep transport.Endpoint) {
	p := r.cfg.Repartition
	spare := r.cfg.ComputeNodes - 1
	start := r.began(ep.Now())
	// The spare's clients wait for the gate whatever happens here.
	defer r.spare.Open()
	ep.Sleep(start + p.AtNs - ep.Now())
	old := r.parts[p.From]
	split := old.Split(p.Fraction)
	t0 := ep.Now()
	bound, err := r.idx.(indexes.Repartitioner).Repartition(ep, p.From, spare, split)
	if err != nil {
		r.fail(fmt.Errorf("%s: repartition compute node %d's keys from %x on to node %d: %w", r.cfg.Index, p.From, split, spare, err))
		return
	}
	if !old.Contains(bound) {
		r.fail(fmt.Errorf("%s: repartitioning moved keys from %x, outside compute node %d's range [%x, %x)", r.cfg.Index, bound, p.From, old.Start, old.End))
		return
	}
	kept := workloads.KeyRange{Start: old.Start, End: bound}
	moved := workloads.KeyRange{Start: bound, End: old.End}
	r.changes = append(r.changes, Change{
		Name: "repartition", StartNs: t0 - start, EndNs: ep.Now() - start,
		Detail: fmt.Sprintf("compute node %d handed keys [%x, %x) to spare node %d", p.From, moved.Start, moved.End, spare),
	})
	r.ranges[p.From].Store(&kept)
	r.ranges[spare].Store(&moved)
}
