package keyorder

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// entry is a test value: a class and a key, longer than a prefix so that
// prefixes tie between different keys.
type entry struct {
	class uint64
	key   []byte
}

func (e *entry) compare(o *entry) int {
	if e.class != o.class {
		if e.class < o.class {
			return -1
		}
		return 1
	}
	return bytes.Compare(e.key, o.key)
}

// Runs answers Floor, Ceil, Find, Min and Len as a plain sorted list does,
// through puts that insert, replace and split runs and deletes that empty
// them (the last third of the steps only deletes, and then every value
// left is deleted). Keys come from a small
// set, so classes, prefixes and whole keys all tie.
func TestRunsModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	draw := func() *entry {
		key := make([]byte, 8*Words+8)
		key[0] = byte(rng.IntN(4))
		key[len(key)-1] = byte(rng.IntN(64))
		if rng.IntN(8) == 0 {
			key = key[:rng.IntN(len(key))] // a short key: zero-padded prefix
		}
		return &entry{class: uint64(rng.IntN(3)), key: key}
	}
	keyOf := func(e *entry) Key { return Key{Class: e.class, P: Of(e.key)} }
	tieOf := func(e *entry) Tie[*entry] { return func(v *entry) int { return bytes.Compare(v.key, e.key) } }
	var x Runs[*entry]
	var model []*entry
	find := func(e *entry) (int, bool) {
		return slices.BinarySearchFunc(model, e, func(a, b *entry) int { return a.compare(b) })
	}
	for step := range 30000 {
		e := draw()
		i, ok := find(e)
		if step >= 20000 || rng.IntN(3) == 0 {
			if p, found := x.Floor(keyOf(e), tieOf(e)); found && x.At(p).compare(e) == 0 {
				x.Delete(p)
			}
			if ok {
				model = slices.Delete(model, i, i+1)
			}
		} else {
			old, replaced := x.Put(keyOf(e), e, tieOf(e))
			if replaced != ok || ok && old != model[i] {
				t.Fatalf("step %d: Put of %x replaced %v (%v), model has it %v", step, e.key, replaced, old, ok)
			}
			if ok {
				model[i] = e
			} else {
				model = slices.Insert(model, i, e)
			}
		}
		q := draw()
		i, ok = find(q)
		p, found := x.Floor(keyOf(q), tieOf(q))
		if want := ok || i > 0; found != want || found && x.At(p) != model[i-btoi(!ok)] {
			t.Fatalf("step %d: Floor(%d, %x) found %v, want %v", step, q.class, q.key, found, want)
		}
		p, found = x.Ceil(keyOf(q), tieOf(q))
		if want := i < len(model); found != want || found && x.At(p) != model[i] {
			t.Fatalf("step %d: Ceil(%d, %x) found %v, want %v", step, q.class, q.key, found, want)
		}
		if p, got := x.Find(keyOf(q), tieOf(q)); got != ok || ok && x.At(p) != model[i] {
			t.Fatalf("step %d: Find(%d, %x) found %v, want %v", step, q.class, q.key, got, ok)
		}
		if x.Len() != len(model) {
			t.Fatalf("step %d: Len %d, want %d", step, x.Len(), len(model))
		}
		if p, got := x.Min(); got != (len(model) > 0) || got && x.At(p) != model[0] {
			t.Fatalf("step %d: Min found %v, want the first of %d", step, got, len(model))
		}
	}
	for len(model) > 0 {
		e := model[rng.IntN(len(model))]
		p, found := x.Find(keyOf(e), tieOf(e))
		if !found || x.At(p) != e {
			t.Fatalf("Find(%d, %x) does not find its value", e.class, e.key)
		}
		x.Delete(p)
		i, _ := find(e)
		model = slices.Delete(model, i, i+1)
		if p, got := x.Min(); x.Len() != len(model) || got != (len(model) > 0) || got && x.At(p) != model[0] {
			t.Fatalf("after deleting %x: Len %d, Min %v; want %d values", e.key, x.Len(), got, len(model))
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A clone holds the same values in the same runs, and changing either
// leaves the other as it was.
func TestRunsClone(t *testing.T) {
	var x Runs[int]
	key := func(i int) Key { return Key{P: Prefix{uint64(i)}} }
	tie := func(i int) Tie[int] { return func(v int) int { return v - i } }
	for i := range 500 {
		x.Put(key(i*2), i*2, tie(i*2))
	}
	c := x.Clone()
	if !reflect.DeepEqual(c, x) {
		t.Fatal("the clone differs from its original")
	}
	c.Put(key(1), 1, tie(1))
	p, _ := c.Min()
	c.Delete(p)
	if x.Len() != 500 || c.Len() != 500 {
		t.Fatalf("after changing the clone: original %d values, clone %d; want 500 each", x.Len(), c.Len())
	}
	if p, ok := x.Find(key(0), tie(0)); !ok || x.At(p) != 0 {
		t.Error("deleting from the clone deleted from the original")
	}
	if _, ok := x.Find(key(1), tie(1)); ok {
		t.Error("putting into the clone put into the original")
	}
}
