package chime

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dmbench/dmbench/internal/keyorder"
)

// The node cache's runs answer floor, get, min and len as a plain sorted
// list does, through inserts, replacements and deletes that split runs,
// and deletes of everything, which empty them; keys come from a small set, with fences longer than a
// prefix, so ranks, prefixes and whole fences all tie.
func TestRunsModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	entry := func() cached {
		low := make([]byte, 32)
		low[0] = byte(rng.IntN(4))
		low[31] = byte(rng.IntN(64))
		return cached{rank: uint64(rng.IntN(3)), p: keyorder.Of(low), low: low, n: &inner{}}
	}
	var x runs
	var model []cached
	find := func(e *cached) (int, bool) {
		return slices.BinarySearchFunc(model, e, func(a cached, b *cached) int { return a.cmp(b) })
	}
	for step := range 30000 {
		e := entry()
		switch i, ok := find(&e); {
		case step >= 20000 || rng.IntN(3) == 0:
			x.delete(e)
			if ok {
				model = slices.Delete(model, i, i+1)
			}
		case ok:
			x.set(e)
			model[i] = e
		default:
			x.set(e)
			model = slices.Insert(model, i, e)
		}
		q := entry()
		i, ok := find(&q)
		var want *cached
		if ok {
			want = &model[i]
		} else if i > 0 {
			want = &model[i-1]
		}
		got := x.floor(&q)
		if (got == nil) != (want == nil) || got != nil && (got.cmp(want) != 0 || got.n != want.n) {
			t.Fatalf("step %d: floor(%x, rank %d) = %v, want %v", step, q.low, q.rank, got, want)
		}
		if g := x.get(&q); (g != nil) != ok || ok && g.n != model[i].n {
			t.Fatalf("step %d: get(%x, rank %d) = %v, present %v", step, q.low, q.rank, g, ok)
		}
		if x.len != len(model) {
			t.Fatalf("step %d: %d entries, want %d", step, x.len, len(model))
		}
		if m := x.min(); (m == nil) != (len(model) == 0) || m != nil && m.n != model[0].n {
			t.Fatalf("step %d: min is %v, want the first of %d", step, m, len(model))
		}
	}
}
