package dlsm

import (
	"bytes"
	"sync"
	"sync/atomic"
)

const maxHeight = 12

// memtable is a compute node's in-memory write buffer, a skip list shared
// by the node's threads (dLSM's MemTable over RocksDB's InlineSkipList).
// A key appears once: a write of a present key replaces its entry in
// place, which is what a newest-sequence-wins lookup returns anyway (no
// snapshots are taken). mu is held only for the pointer work, never
// across a verb or Compute; the search cost is charged beforehand, as a
// lock-free list's writers search without a lock.
type memtable struct {
	mu     sync.Mutex
	head   *mnode
	height int
	rng    uint64
	n      int
	frozen bool // switched to immutable: no more writes

	size atomic.Int64 // bytes of entries, as the table they become
	num  uint64       // memtable number: immutables flush in this order
	tbl  *table       // the flushed table, once written, until installed
}

type mnode struct {
	rec  record
	next [maxHeight]*mnode
}

func newMemtable(num uint64) *memtable {
	return &memtable{head: &mnode{}, height: 1, rng: num*0x9e3779b97f4a7c15 + 1, num: num}
}

// randomHeight draws a tower height with branching 4, from the list's own
// deterministic generator.
func (m *memtable) randomHeight() int {
	h := 1
	for h < maxHeight {
		m.rng ^= m.rng << 13
		m.rng ^= m.rng >> 7
		m.rng ^= m.rng << 17
		if m.rng%4 != 0 {
			break
		}
		h++
	}
	return h
}

// findGE returns the first node with key >= key, filling prev when not nil.
func (m *memtable) findGE(key []byte, prev *[maxHeight]*mnode) *mnode {
	x := m.head
	for lv := m.height - 1; lv >= 0; lv-- {
		for nx := x.next[lv]; nx != nil && bytes.Compare(nx.rec.key, key) < 0; nx = x.next[lv] {
			x = nx
		}
		if prev != nil {
			prev[lv] = x
		}
	}
	return x.next[0]
}

// put adds or replaces key's entry; false if the memtable is frozen.
func (m *memtable) put(r record, esz int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.frozen {
		return false
	}
	var prev [maxHeight]*mnode
	if x := m.findGE(r.key, &prev); x != nil && bytes.Equal(x.rec.key, r.key) {
		x.rec = r
		return true
	}
	h := m.randomHeight()
	for lv := m.height; lv < h; lv++ {
		prev[lv] = m.head
	}
	m.height = max(m.height, h)
	nd := &mnode{rec: r}
	for lv := range h {
		nd.next[lv] = prev[lv].next[lv]
		prev[lv].next[lv] = nd
	}
	m.n++
	m.size.Add(int64(esz))
	return true
}

// get returns key's entry (a copy of its value).
func (m *memtable) get(key []byte) (kind byte, val []byte, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	x := m.findGE(key, nil)
	if x == nil || !bytes.Equal(x.rec.key, key) {
		return 0, nil, false
	}
	return x.rec.kind, bytes.Clone(x.rec.val), true
}

// count is the number of entries, for the search cost.
func (m *memtable) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n
}

// freeze stops writes so the memtable can be flushed.
func (m *memtable) freeze() {
	m.mu.Lock()
	m.frozen = true
	m.mu.Unlock()
}

// batch copies up to k entries with keys >= from (> from when after).
func (m *memtable) batch(from []byte, after bool, k int) []record {
	m.mu.Lock()
	defer m.mu.Unlock()
	x := m.findGE(from, nil)
	if after && x != nil && bytes.Equal(x.rec.key, from) {
		x = x.next[0]
	}
	var out []record
	for ; x != nil && len(out) < k; x = x.next[0] {
		out = append(out, record{key: x.rec.key, kind: x.rec.kind, seq: x.rec.seq, val: x.rec.val})
	}
	return out
}

// records lists every entry in key order; the memtable must be frozen.
func (m *memtable) records() []record {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]record, 0, m.n)
	for x := m.head.next[0]; x != nil; x = x.next[0] {
		out = append(out, x.rec)
	}
	return out
}
