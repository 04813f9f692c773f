package chime

import (
	"bytes"
	"slices"
)

// maxRun is the most entries a run holds before it splits: long enough
// that the directory stays short, short enough that an insertion moves
// little.
const maxRun = 64

// runs holds the node cache's entries in order (as fpbtree's cache does):
// sorted runs, none empty, and the first entry of each in a directory. A
// lookup is two binary searches over contiguous entries compared in line,
// where a general B-tree calls a less function per comparison and walks
// an iterator (its lookups were a seventh of the simulator's time).
type runs struct {
	firsts []cached   // firsts[r] is nodes[r][0]
	nodes  [][]cached // each run in order
	len    int
}

// cmp orders a against b: by rank, then prefix, then the whole low fence.
func (a *cached) cmp(b *cached) int {
	if a.rank != b.rank {
		if a.rank < b.rank {
			return -1
		}
		return 1
	}
	if c := a.p.Compare(b.p); c != 0 {
		return c
	}
	return bytes.Compare(a.low, b.low)
}

// pos is the position of the last entry at most e: run r (-1 when e
// precedes every entry) and index i within it.
func (x *runs) pos(e *cached) (r, i int) {
	lo, hi := 0, len(x.firsts)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if x.firsts[m].cmp(e) <= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	r = lo - 1
	if r < 0 {
		return -1, 0
	}
	run := x.nodes[r]
	lo, hi = 1, len(run)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if run[m].cmp(e) <= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return r, lo - 1
}

// floor is the last entry at most e, or nil.
func (x *runs) floor(e *cached) *cached {
	r, i := x.pos(e)
	if r < 0 {
		return nil
	}
	return &x.nodes[r][i]
}

// get is the entry equal to e, or nil.
func (x *runs) get(e *cached) *cached {
	if f := x.floor(e); f != nil && f.cmp(e) == 0 {
		return f
	}
	return nil
}

// min is the first entry, or nil.
func (x *runs) min() *cached {
	if len(x.firsts) == 0 {
		return nil
	}
	return &x.firsts[0]
}

// set inserts e, replacing the entry equal to it if there is one.
func (x *runs) set(e cached) {
	r, i := x.pos(&e)
	switch {
	case r >= 0 && x.nodes[r][i].cmp(&e) == 0:
		x.nodes[r][i] = e
		if i == 0 {
			x.firsts[r] = e
		}
		return
	case len(x.nodes) == 0:
		x.firsts = append(x.firsts, e)
		x.nodes = append(x.nodes, []cached{e})
		x.len++
		return
	case r < 0:
		r, i = 0, 0
		x.firsts[0] = e
	default:
		i++
	}
	x.len++
	x.nodes[r] = slices.Insert(x.nodes[r], i, e)
	if run := x.nodes[r]; len(run) > maxRun {
		right := slices.Clone(run[len(run)/2:])
		x.nodes[r] = slices.Delete(run, len(run)/2, len(run))
		x.nodes = slices.Insert(x.nodes, r+1, right)
		x.firsts = slices.Insert(x.firsts, r+1, right[0])
	}
}

// delete removes the entry equal to e, if there is one.
func (x *runs) delete(e cached) {
	r, i := x.pos(&e)
	if r < 0 || x.nodes[r][i].cmp(&e) != 0 {
		return
	}
	x.len--
	x.nodes[r] = slices.Delete(x.nodes[r], i, i+1)
	switch {
	case len(x.nodes[r]) == 0:
		x.nodes = slices.Delete(x.nodes, r, r+1)
		x.firsts = slices.Delete(x.firsts, r, r+1)
	case i == 0:
		x.firsts[r] = x.nodes[r][0]
	}
}
