package dex

import (
	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// coolingSlots is the FIFO array of one cooling-map bucket: six local
// pointers in a 64-byte cache line (section 8.1).
const coolingSlots = 6

// coolingSlot names a cooling frame at one generation, so that a slot
// left behind by a frame re-heated or reused is recognised as stale.
type coolingSlot struct {
	f   *frame
	gen uint64
}

// bucket is one FIFO array under its own lock.
type bucket struct {
	mu    transport.Mutex
	slots []coolingSlot
	cap   int
}

// coolingMap holds the eviction candidates (section 5.2): a hash table of
// FIFO arrays. With fifo it is the baseline of Figures 4 and 9, one FIFO
// queue under one lock.
type coolingMap struct {
	buckets []bucket
}

// newCoolingMap sizes the map to 10% of frames (section 8.1).
func newCoolingMap(frames int, fifo bool) *coolingMap {
	total := max(coolingSlots, frames/10)
	// A bucket's lock is a test-and-test-and-set spinlock
	// (include/tree/hash_table.h with util/lock.h's Lock). The public
	// code has no FIFO baseline; it takes the buckets' lock.
	n, size := max(1, total/coolingSlots), coolingSlots
	if fifo {
		n, size = 1, total
	}
	m := &coolingMap{buckets: make([]bucket, n)}
	for i := range m.buckets {
		m.buckets[i].mu.Kind, m.buckets[i].cap = transport.LockSpin, size
	}
	return m
}

func (m *coolingMap) bucketOf(a transport.GAddr) *bucket {
	h := (uint64(a) >> 10) * 0x9e3779b97f4a7c15
	return &m.buckets[h%uint64(len(m.buckets))]
}

// push appends f at the tail of its bucket; when the array is full the
// head is shifted out and returned, the next page to evict.
func (m *coolingMap) push(ep transport.Endpoint, f *frame) (coolingSlot, bool) {
	b := m.bucketOf(transport.GAddr(f.addr.Load()))
	b.mu.Lock(ep)
	// The bucket's line (or the queue's head and tail) moves here.
	ep.Compute(cost.CachelineTransfer())
	var out coolingSlot
	full := len(b.slots) == b.cap
	if full {
		out = b.slots[0]
		b.slots = append(b.slots[:0], b.slots[1:]...)
	}
	b.slots = append(b.slots, coolingSlot{f: f, gen: f.gen.Load()})
	b.mu.Unlock()
	return out, full
}

// pop removes the oldest slot of a random bucket (section 5.4: a thread
// without free pages evicts from a randomly chosen bucket).
func (m *coolingMap) pop(ep transport.Endpoint) (coolingSlot, bool) {
	start := ep.Rand().IntN(len(m.buckets))
	for i := range min(len(m.buckets), 8) {
		b := &m.buckets[(start+i)%len(m.buckets)]
		b.mu.Lock(ep)
		ep.Compute(cost.CachelineTransfer())
		if len(b.slots) == 0 {
			b.mu.Unlock()
			continue
		}
		out := b.slots[0]
		b.slots = append(b.slots[:0], b.slots[1:]...)
		b.mu.Unlock()
		return out, true
	}
	return coolingSlot{}, false
}

// clear empties every bucket; the caller has quiesced the node.
func (m *coolingMap) clear() {
	for i := range m.buckets {
		m.buckets[i].slots = nil
	}
}
