package indextest

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

// planner writes plans: operations with the results the model expects,
// applying writes to the model as it goes. A phase of plans run
// concurrently must give each key to one worker only, and read-only phases
// must not write, so the expected results hold whatever the interleaving.
type planner struct {
	m      *model
	ks, vs int
	next   uint64 // the last value id handed out
}

// value is a fresh value: ids are unique within a case.
func (p *planner) value() []byte {
	p.next++
	return Value(p.next, p.vs)
}

func (p *planner) insert(k []byte) step {
	v := p.value()
	p.m.set(k, v)
	return step{kind: opInsert, key: k, val: v}
}

func (p *planner) update(k []byte) step {
	v := p.value()
	if _, ok := p.m.get(k); !ok {
		return step{kind: opUpdate, key: k, val: v, err: indexes.ErrNotFound}
	}
	p.m.set(k, v)
	return step{kind: opUpdate, key: k, val: v}
}

func (p *planner) delete(k []byte) step {
	if !p.m.del(k) {
		return step{kind: opDelete, key: k, err: indexes.ErrNotFound}
	}
	return step{kind: opDelete, key: k}
}

func (p *planner) search(k []byte) step {
	v, _ := p.m.get(k)
	return step{kind: opSearch, key: k, val: v}
}

func (p *planner) scan(start []byte, n, stop int) step {
	lim := n
	if stop > 0 {
		lim = min(n, stop)
	}
	return step{kind: opScan, key: start, n: n, stop: stop, want: p.m.scan(start, lim)}
}

// scanStart picks a scan's start key: mostly a key of the first space key
// numbers (present or not), sometimes a random string, the zero key (the
// start of the key space) or the all-ones key (its end).
func (p *planner) scanStart(rng *rand.Rand, space uint64) []byte {
	switch r := rng.IntN(100); {
	case r < 70:
		return Key(rng.Uint64N(space), p.ks)
	case r < 85:
		k := make([]byte, p.ks)
		for i := range k {
			k[i] = byte(rng.Uint32())
		}
		return k
	case r < 95:
		return make([]byte, p.ks)
	default:
		k := make([]byte, p.ks)
		for i := range k {
			k[i] = 0xff
		}
		return k
	}
}

// verify lists read-only steps that check the model: a search of each of
// keys, scans of 1-100 entries from scans random starts among the first
// space key numbers, and a scan of everything from the zero key.
func (p *planner) verify(rng *rand.Rand, keys [][]byte, scans int, space uint64) []step {
	steps := make([]step, 0, len(keys)+scans+1)
	for _, k := range keys {
		steps = append(steps, p.search(k))
	}
	for range scans {
		steps = append(steps, p.scan(p.scanStart(rng, space), 1+rng.IntN(100), 0))
	}
	steps = append(steps, p.scan(make([]byte, p.ks), p.m.len()+10, 0))
	rng.Shuffle(len(steps), func(i, j int) { steps[i], steps[j] = steps[j], steps[i] })
	return steps
}

// fixture is one case's index, model and randomness.
type fixture struct {
	*Instance
	rep *reporter
	p   *planner
	rng *rand.Rand
}

// keys returns keys numbered lo..hi-1 of the fixture's key size, in key
// number order.
func (fx *fixture) keys(lo, hi uint64) [][]byte {
	ks := make([][]byte, 0, hi-lo)
	for i := lo; i < hi; i++ {
		ks = append(ks, Key(i, fx.p.ks))
	}
	return ks
}

// owned keeps the keys of keys that node may search and write.
func (fx *fixture) owned(keys [][]byte, node transport.NodeID) [][]byte {
	var out [][]byte
	for _, k := range keys {
		if fx.ownedBy(k, node) {
			out = append(out, k)
		}
	}
	return out
}

// load bulk-loads keys (sorted here) with fresh values and records them
// in the model.
func (fx *fixture) load(t testing.TB, keys [][]byte) {
	t.Helper()
	sorted := sortedCopy(keys)
	vals := make([][]byte, len(sorted))
	for i, k := range sorted {
		vals[i] = fx.p.value()
		fx.p.m.set(k, vals[i])
	}
	fx.Load(t, sorted, vals)
}

// run runs plans[i] on worker i of the workers on nodes and checks every
// step; workers beyond the plans do nothing.
func (fx *fixture) run(t testing.TB, nodes []transport.NodeID, plans [][]step) {
	t.Helper()
	if n := fx.Workers(nodes); len(plans) > n {
		t.Fatalf("indextest: %d plans for %d workers", len(plans), n)
	}
	fx.GoAll(nodes, func(w Worker, _ transport.Endpoint, c indexes.Client) {
		if w.ID >= len(plans) {
			return
		}
		ch := newChecker(c, fx.rep, w.String(), fx.p.ks, fx.p.vs)
		for i := range plans[w.ID] {
			ch.do(&plans[w.ID][i])
		}
	})
	fx.Run(t)
}

// runSpread deals steps round-robin to every worker on nodes and runs
// them: for read-only steps, or writes of distinct keys.
func (fx *fixture) runSpread(t testing.TB, nodes []transport.NodeID, steps []step) {
	t.Helper()
	groups := make([][]step, len(steps))
	for i := range steps {
		groups[i] = steps[i : i+1]
	}
	fx.runGroups(t, nodes, groups)
}

// runGroups deals groups round-robin to every worker on nodes, so that
// the steps of a group run in order on one worker, and runs them. When
// keys are partitioned among compute nodes (Spec.Partitioned), a group
// with a search or write goes round-robin to the workers of its key's
// owner instead, wherever nodes are; groups of scans stay on nodes.
func (fx *fixture) runGroups(t testing.TB, nodes []transport.NodeID, groups [][]step) {
	t.Helper()
	if _, part := fx.Owner(make([]byte, fx.p.ks)); !part {
		fx.run(t, nodes, flatten(stripe(groups, fx.Workers(nodes))))
		return
	}
	all := fx.ComputeNodes()
	per := fx.Workers(all[:1])
	dealt := make([][][]step, fx.Workers(all))
	next := map[transport.NodeID]int{}
	readers := 0
	for _, g := range groups {
		node, owned := fx.owner(t, g)
		if !owned {
			node = nodes[readers/per%len(nodes)]
			readers++
		}
		j := slices.Index(all, node)
		dealt[j*per+next[node]%per] = append(dealt[j*per+next[node]%per], g)
		next[node]++
	}
	fx.run(t, all, flatten(dealt))
}

// owner is the owner of the key g searches or writes, if it does; all of
// a group's keys must have one owner. Scans have none: they may cross
// partitions.
func (fx *fixture) owner(t testing.TB, g []step) (transport.NodeID, bool) {
	t.Helper()
	var owner transport.NodeID
	found := false
	for _, s := range g {
		if s.kind == opScan {
			continue
		}
		o, _ := fx.Owner(s.key)
		if found && o != owner {
			t.Fatalf("indextest: a group holds keys of compute nodes %d and %d", owner, o)
		}
		owner, found = o, true
	}
	return owner, found
}

// flatten joins each worker's groups into its plan.
func flatten(dealt [][][]step) [][]step {
	plans := make([][]step, len(dealt))
	for i, gs := range dealt {
		for _, g := range gs {
			plans[i] = append(plans[i], g...)
		}
	}
	return plans
}

// ownedBy is whether clients of node may search or write key: always,
// unless keys are partitioned and another compute node owns it.
func (fx *fixture) ownedBy(key []byte, node transport.NodeID) bool {
	o, part := fx.Owner(key)
	return !part || o == node
}

// ownedKeys are the first n key numbers node may search and write (all
// numbers when keys are not partitioned), as keys in key number order.
func (fx *fixture) ownedKeys(node transport.NodeID, n int) [][]byte {
	ks := make([][]byte, 0, n)
	for i := uint64(0); len(ks) < n; i++ {
		if k := Key(i, fx.p.ks); fx.ownedBy(k, node) {
			ks = append(ks, k)
		}
	}
	return ks
}
