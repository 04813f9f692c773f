package keyorder

import "slices"

// Key is a value's place in Runs: its class first (sets of keys kept apart
// in one order, such as a tree's levels), then its key's prefix. Values
// whose classes and prefixes tie are ordered by their full keys, through
// a comparison the caller passes.
type Key struct {
	Class uint64
	P     Prefix
}

// compare orders k against o by class, then by prefix.
func (k *Key) compare(o *Key) int {
	if k.Class != o.Class {
		if k.Class < o.Class {
			return -1
		}
		return 1
	}
	return k.P.Compare(o.P)
}

// Tie compares a value's full key with the one searched for, as
// bytes.Compare does; Runs calls it only when classes and prefixes tie.
type Tie[V any] func(v V) int

// Runs is a set of values in key order, for the compute-side caches every
// simulated search consults: sorted runs of at most maxRun items, none
// empty, and each run's first item in a directory. A lookup is two binary
// searches over contiguous items compared as integers in line, where a
// general B-tree calls a less function per comparison and walks an
// iterator (its lookups were a tenth to a fifth of the simulator's time
// in the node caches of DMTree, CHIME and Sherman).
type Runs[V any] struct {
	firsts []item[V]   // firsts[r] is runs[r][0]
	runs   [][]item[V] // each in key order
	n      int
}

type item[V any] struct {
	k Key
	v V
}

// maxRun is the most items a run holds before it splits: long enough that
// the directory stays small, short enough that an insertion moves little.
const maxRun = 64

// Pos is an item's position; positions change when the set does.
type Pos struct{ r, i int }

// Len is the number of values.
func (x *Runs[V]) Len() int { return x.n }

// At is the value at p.
func (x *Runs[V]) At(p Pos) V { return x.runs[p.r][p.i].v }

// atMost reports whether e's key is at most (k, tie).
func atMost[V any](e *item[V], k *Key, tie Tie[V]) bool {
	if e.k.P[0] != k.P[0] && e.k.Class == k.Class {
		return e.k.P[0] < k.P[0]
	}
	if c := e.k.compare(k); c != 0 {
		return c < 0
	}
	return tie(e.v) <= 0
}

// Floor is the position of the last value at or below (k, tie), and false
// when every value is above it.
func (x *Runs[V]) Floor(k Key, tie Tie[V]) (Pos, bool) {
	lo, hi := 0, len(x.firsts)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if atMost(&x.firsts[m], &k, tie) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	r := lo - 1
	if r < 0 {
		return Pos{}, false
	}
	run := x.runs[r]
	lo, hi = 1, len(run)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if atMost(&run[m], &k, tie) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return Pos{r, lo - 1}, true
}

// equal reports whether the value at p has key (k, tie).
func (x *Runs[V]) equal(p Pos, k *Key, tie Tie[V]) bool {
	e := &x.runs[p.r][p.i]
	return e.k == *k && tie(e.v) == 0
}

// Find is the position of the value whose key is (k, tie), and false
// when there is none.
func (x *Runs[V]) Find(k Key, tie Tie[V]) (Pos, bool) {
	if p, ok := x.Floor(k, tie); ok && x.equal(p, &k, tie) {
		return p, true
	}
	return Pos{}, false
}

// Ceil is the position of the first value at or above (k, tie), and
// false when every value is below it.
func (x *Runs[V]) Ceil(k Key, tie Tie[V]) (Pos, bool) {
	p, ok := x.Floor(k, tie)
	switch {
	case !ok:
		return Pos{}, x.n > 0
	case x.equal(p, &k, tie):
		return p, true
	case p.i+1 < len(x.runs[p.r]):
		return Pos{p.r, p.i + 1}, true
	default:
		return Pos{p.r + 1, 0}, p.r+1 < len(x.runs)
	}
}

// Min is the position of the first value, and false when there is none.
func (x *Runs[V]) Min() (Pos, bool) { return Pos{}, x.n > 0 }

// Put adds v under (k, tie), and returns the value it replaces when one
// has that key.
func (x *Runs[V]) Put(k Key, v V, tie Tie[V]) (old V, replaced bool) {
	e := item[V]{k, v}
	p, ok := x.Floor(k, tie)
	switch {
	case ok && x.equal(p, &k, tie):
		old = x.At(p)
		x.runs[p.r][p.i] = e
		if p.i == 0 {
			x.firsts[p.r] = e
		}
		return old, true
	case x.n == 0:
		x.firsts = append(x.firsts, e)
		x.runs = append(x.runs, []item[V]{e})
		x.n++
		return old, false
	case !ok:
		p = Pos{0, 0}
		x.firsts[0] = e
	default:
		p.i++
	}
	x.n++
	x.runs[p.r] = slices.Insert(x.runs[p.r], p.i, e)
	if run := x.runs[p.r]; len(run) > maxRun {
		right := slices.Clone(run[len(run)/2:])
		x.runs[p.r] = slices.Delete(run, len(run)/2, len(run))
		x.runs = slices.Insert(x.runs, p.r+1, right)
		x.firsts = slices.Insert(x.firsts, p.r+1, right[0])
	}
	return old, false
}

// Clone is a copy of x that shares no slice with it; the values
// themselves are copied as V copies (a pointer is shared). A compute
// node's cache copied to another (indexes.CacheCopier) keeps its runs as
// they were split, so the copy is x item for item and run for run.
func (x *Runs[V]) Clone() Runs[V] {
	c := Runs[V]{firsts: slices.Clone(x.firsts), runs: make([][]item[V], len(x.runs)), n: x.n}
	for r, run := range x.runs {
		c.runs[r] = slices.Clone(run)
	}
	return c
}

// Delete removes the value at p.
func (x *Runs[V]) Delete(p Pos) {
	x.n--
	x.runs[p.r] = slices.Delete(x.runs[p.r], p.i, p.i+1)
	switch {
	case len(x.runs[p.r]) == 0:
		x.runs = slices.Delete(x.runs, p.r, p.r+1)
		x.firsts = slices.Delete(x.firsts, p.r, p.r+1)
	case p.i == 0:
		x.firsts[p.r] = x.runs[p.r][0]
	}
}
