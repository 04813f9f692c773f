package dlsm

import (
	"bytes"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// source is one sorted input of a scan's merging iterator.
type source interface {
	valid() bool
	key() []byte
	kind() byte
	value() ([]byte, error) // may READ from remote memory
	next()
}

// memBatch is how many memtable entries a scan copies at a time.
const memBatch = 64

// memIter walks a memtable in batches copied under its lock.
type memIter struct {
	m   *memtable
	buf []record
	i   int
	end bool
}

func newMemIter(m *memtable, from []byte) *memIter {
	it := &memIter{m: m}
	it.buf = m.batch(from, false, memBatch)
	it.end = len(it.buf) < memBatch
	return it
}

func (it *memIter) valid() bool            { return it.i < len(it.buf) }
func (it *memIter) key() []byte            { return it.buf[it.i].key }
func (it *memIter) kind() byte             { return it.buf[it.i].kind }
func (it *memIter) value() ([]byte, error) { return bytes.Clone(it.buf[it.i].val), nil }
func (it *memIter) next() {
	it.i++
	if it.i == len(it.buf) && !it.end {
		last := it.buf[len(it.buf)-1].key
		it.buf, it.i = it.m.batch(last, true, memBatch), 0
		it.end = len(it.buf) < memBatch
	}
}

// tableIter walks one SSTable: keys and kinds from the in-memory index
// block, values from remote memory in sequential prefetch READs of about
// 6 KB (dLSM's byte-addressable sequential iterator).
type tableIter struct {
	f      *format
	ep     transport.Endpoint
	t      *table
	i      int
	lo, hi int // entries held in buf
	buf    []byte
}

func newTableIter(ep transport.Endpoint, s *shard, t *table, from []byte) *tableIter {
	s.openTable(ep, t)
	ep.Compute(cost.NodeSearch(t.n))
	s.closeTable(ep, t)
	return &tableIter{f: &s.x.f, ep: ep, t: t, i: t.seek(&s.x.f, from)}
}

func (it *tableIter) valid() bool { return it.i < it.t.n }
func (it *tableIter) key() []byte { return it.t.key(it.f, it.i) }
func (it *tableIter) kind() byte  { return it.t.kinds[it.i] }
func (it *tableIter) next()       { it.i++ }
func (it *tableIter) value() ([]byte, error) {
	f := it.f
	if it.i < it.lo || it.i >= it.hi {
		per := max(1, prefetchBytes/f.esz)
		it.lo, it.hi = it.i, min(it.t.n, it.i+per)
		it.buf = make([]byte, (it.hi-it.lo)*f.esz)
		if err := it.ep.Read(it.buf, it.t.entryAddr(f, it.lo)); err != nil {
			return nil, wrap("scan: read table", err)
		}
	}
	_, _, _, val, err := f.parseEntry(it.buf[(it.i-it.lo)*f.esz:])
	if err != nil {
		return nil, err
	}
	return bytes.Clone(val), nil
}

// levelIter concatenates the disjoint sorted tables of a level, opening
// each as the scan reaches it.
type levelIter struct {
	f      *format
	s      *shard
	ep     transport.Endpoint
	tables []*table
	ti     int
	cur    *tableIter
}

func newLevelIter(ep transport.Endpoint, s *shard, tables []*table, from []byte) *levelIter {
	ep.Compute(cost.NodeSearch(len(tables)))
	f := &s.x.f
	it := &levelIter{f: f, s: s, ep: ep, tables: tables}
	for it.ti < len(tables) && bytes.Compare(tables[it.ti].largest(f), from) < 0 {
		it.ti++
	}
	if it.ti < len(tables) {
		it.cur = newTableIter(ep, s, tables[it.ti], from)
	}
	return it
}

func (it *levelIter) valid() bool            { return it.cur != nil && it.cur.valid() }
func (it *levelIter) key() []byte            { return it.cur.key() }
func (it *levelIter) kind() byte             { return it.cur.kind() }
func (it *levelIter) value() ([]byte, error) { return it.cur.value() }
func (it *levelIter) next() {
	it.cur.next()
	if !it.cur.valid() {
		it.ti++
		it.cur = nil
		if it.ti < len(it.tables) {
			it.cur = newTableIter(it.ep, it.s, it.tables[it.ti], it.tables[it.ti].smallest(it.f))
		}
	}
}

// scan returns up to n live entries with keys in [from, upper) (upper nil:
// no bound), merging the memtables, level 0's tables and one iterator per
// deeper level; for a key in several sources the newest wins.
func (s *shard) scan(ep transport.Endpoint, from, upper []byte, n int) ([]record, error) {
	v := s.view()
	ep.SetStep(stepMemtable)
	var srcs []source
	for _, m := range v.mems {
		ep.Compute(cost.NodeSearch(m.count() + 1))
		srcs = append(srcs, newMemIter(m, from))
	}
	ep.SetStep(stepSSTable)
	for _, t := range v.ver.levels[0] {
		srcs = append(srcs, newTableIter(ep, s, t, from))
	}
	for _, tables := range v.ver.levels[1:] {
		if len(tables) > 0 {
			srcs = append(srcs, newLevelIter(ep, s, tables, from))
		}
	}
	var out []record
	for len(out) < n {
		ep.Compute(cost.NodeSearch(len(srcs)))
		best := -1
		for i, src := range srcs {
			if src.valid() && (best < 0 || bytes.Compare(src.key(), srcs[best].key()) < 0) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		key := bytes.Clone(srcs[best].key())
		if upper != nil && bytes.Compare(key, upper) >= 0 {
			break
		}
		if srcs[best].kind() == kindValue {
			val, err := srcs[best].value()
			if err != nil {
				return nil, err
			}
			out = append(out, record{key: key, kind: kindValue, val: val})
		}
		for _, src := range srcs {
			if src.valid() && bytes.Equal(src.key(), key) {
				src.next()
			}
		}
	}
	return out, nil
}
