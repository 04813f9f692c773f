package chime

import (
	"bytes"
	"hash/fnv"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/dmbench/dmbench/internal/keyorder"
	"github.com/dmbench/dmbench/transport"
)

// nodeCache is one compute node's cache of internal nodes, shared by the
// clients of that node: copies keyed by (level, low fence), so the
// level-1 node covering a key is one ordered lookup, as Sherman's and
// CHIME's index caches do. Entries may be stale; readers validate against
// the fences they find in memory and invalidate.
type nodeCache struct {
	mu       sync.RWMutex // never held across a verb
	order    keyorder.Runs[*inner]
	max      int // nodes that fit the budget
	hits     atomic.Uint64
	lookups  atomic.Uint64
	rootNode atomic.Pointer[inner]
}

// The cache orders nodes by level, then low fence (-inf first): its class
// is rank, and the fence's prefix is compared as integers, the fence itself
// only when the prefixes tie (comparing fences byte by byte through the
// nodes was a tenth of the simulator's time).
func rank(level int, lowInf bool) uint64 {
	r := uint64(level) << 1
	if !lowInf {
		r |= 1
	}
	return r
}

// place is n's key in the cache.
func (n *inner) place() keyorder.Key {
	return keyorder.Key{Class: rank(n.level, n.lowInf), P: n.lowP}
}

// byLow compares a cached node's low fence with low.
func byLow(low []byte) keyorder.Tie[*inner] {
	return func(n *inner) int { return bytes.Compare(n.low, low) }
}

func newNodeCache(budget uint64, nodeBytes int) *nodeCache {
	return &nodeCache{max: max(1, int(budget/uint64(nodeBytes)))}
}

// find returns the cached node of level covering key.
func (c *nodeCache) find(level int, key []byte) *inner {
	c.lookups.Add(1)
	c.mu.RLock()
	defer c.mu.RUnlock()
	p, ok := c.order.Floor(keyorder.Key{Class: rank(level, false), P: keyorder.Of(key)}, byLow(key))
	if !ok {
		return nil
	}
	n := c.order.At(p)
	if n.level != level || !n.covers(key) {
		return nil
	}
	c.hits.Add(1)
	return n
}

// put caches n, evicting a node near victim when the budget is spent.
func (c *nodeCache) put(n *inner, victim []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, had := c.order.Find(n.place(), byLow(n.low)); !had && c.order.Len() >= c.max {
		p, ok := c.order.Floor(keyorder.Key{Class: rank(1, false), P: keyorder.Of(victim)}, byLow(victim))
		if !ok {
			p, _ = c.order.Min()
		}
		c.order.Delete(p)
	}
	c.order.Put(n.place(), n, byLow(n.low))
}

// invalidate drops n if it is still the cached copy.
func (c *nodeCache) invalidate(n *inner) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.order.Find(n.place(), byLow(n.low)); ok {
		if cur := c.order.At(p); cur.addr == n.addr && cur.version == n.version {
			c.order.Delete(p)
		}
	}
}

// copyFrom makes c what o is (Chime.CopyCaches): the same nodes in the
// same runs, the same root and counters. The nodes themselves are shared:
// no one changes a node once it is cached (insertSeparator and splitInner
// change a node they have just READ, then cache it), so the two caches
// only ever read them. Both caches have the same budget (Env.CacheBytes).
func (c *nodeCache) copyFrom(o *nodeCache) {
	o.mu.RLock()
	order := o.order.Clone()
	o.mu.RUnlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.order = order
	c.hits.Store(o.hits.Load())
	c.lookups.Store(o.lookups.Load())
	c.rootNode.Store(o.rootNode.Load())
}

func (c *nodeCache) bytes(nodeBytes int) uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return uint64(c.order.Len() * nodeBytes)
}

// hotspotBuffer is CHIME's hotspot buffer (dmemsys/CHIME
// include/IdxCache.h): the part of the cache that remembers which leaf
// slots hold hot keys, so that a search READs one entry instead of the
// neighbourhood (hotness-aware speculative read). An entry names a slot
// (leaf address, slot index) and carries a 2-byte fingerprint of the key
// last found there and an access count: 16 bytes, as in CHIME. A search
// that knows its leaf probes the slots of its key's neighbourhood, takes
// the most frequently hit slot whose fingerprint matches, and READs it;
// every key a neighbourhood READ finds is recorded (add_to_cache): a
// known slot counts one more hit (or restarts at 1 under a new
// fingerprint), a new one takes a free way of its bucket or replaces the
// bucket's least frequently used way.
type hotspotBuffer struct {
	mu      sync.Mutex // never held across a verb
	buckets [][hotWays]hotEntry
	// tags[b] holds a byte per way of bucket b (way i in byte i): a hash
	// of the way's leaf, slot and fingerprint, 0 for a free way. A lookup
	// probes a bucket per slot of the neighbourhood; its 128 bytes of
	// entries mostly miss the processor's caches (the lookups were a
	// seventh of the simulator's time), so it reads them only when a tag
	// matches. A tag may match a way that does not: it only filters.
	tags []uint64
}

// hotWays is the ways per bucket.
const hotWays = 8

type hotEntry struct {
	leaf transport.GAddr // 0: a free way
	slot uint16
	fp   uint16
	freq int32
}

// hotEntryBytes is one entry of CHIME's IdxCacheEntry: leaf address,
// slot index, fingerprint, access count.
const hotEntryBytes = 8 + 2 + 2 + 4

func newHotspotBuffer(budget uint64) *hotspotBuffer {
	n := int(budget / (hotWays * hotEntryBytes))
	if n == 0 {
		return nil
	}
	return &hotspotBuffer{buckets: make([][hotWays]hotEntry, n), tags: make([]uint64, n)}
}

// hotFingerprint is the 2-byte fingerprint of a key (CHIME's key2fp).
func hotFingerprint(key []byte) uint16 {
	f := fnv.New32a()
	f.Write(key)
	return uint16(f.Sum32()>>16) | 1
}

// bucket is the bucket of slot of leaf, and the tag of its way there for a
// key of fingerprint fp. A tag is never 0, the tag of a free way, so a
// bucket's tags word is 0 exactly when the bucket is empty (copyFrom).
func (h *hotspotBuffer) bucket(leaf transport.GAddr, slot int, fp uint16) (int, byte) {
	x := (uint64(leaf) ^ uint64(slot)*0x9e3779b97f4a7c15) * 0xff51afd7ed558ccd
	return int((x >> 17) % uint64(len(h.buckets))), max(1, byte(x>>56)^byte(fp)^byte(fp>>8))
}

// setTag sets the tag of way i of bucket b.
func (h *hotspotBuffer) setTag(b, i int, tag byte) {
	h.tags[b] = h.tags[b]&^(0xff<<(8*i)) | uint64(tag)<<(8*i)
}

// lookup returns the slot among the n slots from first (mod span) that
// most often held a key of fingerprint fp, probing one bucket per slot.
func (h *hotspotBuffer) lookup(leaf transport.GAddr, first, n, span int, fp uint16) (int, bool) {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	h.mu.Lock()
	defer h.mu.Unlock()
	best, freq := -1, int32(0)
	for d := range n {
		s := (first + d) % span
		b, tag := h.bucket(leaf, s, fp)
		// Bytes of m are zero where the tag matches; may marks them (and
		// at worst a byte above a match).
		m := h.tags[b] ^ uint64(tag)*ones
		for may := (m - ones) &^ m & highs; may != 0; may &= may - 1 {
			e := &h.buckets[b][bits.TrailingZeros64(may)/8]
			if e.leaf == leaf && int(e.slot) == s && e.fp == fp && e.freq > freq {
				best, freq = s, e.freq
			}
		}
	}
	return best, best >= 0
}

// record notes that a key of fingerprint fp was found in slot of leaf.
func (h *hotspotBuffer) record(leaf transport.GAddr, slot int, fp uint16) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.put(leaf, slot, fp)
}

// recordAll records the keys of fingerprints fps found in slots of leaf,
// in order, as record would one by one. It locks once: a lock is a
// barrier to the processor, which can then not overlap the cache misses
// of one bucket with the next.
func (h *hotspotBuffer) recordAll(leaf transport.GAddr, slots []int, fps []uint16) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, s := range slots {
		h.put(leaf, s, fps[i])
	}
}

// put records a key under h.mu.
func (h *hotspotBuffer) put(leaf transport.GAddr, slot int, fp uint16) {
	bi, tag := h.bucket(leaf, slot, fp)
	b := &h.buckets[bi]
	victim := -1
	for i := range b {
		e := &b[i]
		if e.leaf == leaf && int(e.slot) == slot {
			if e.fp != fp {
				e.fp, e.freq = fp, 1
				h.setTag(bi, i, tag)
			} else if e.freq < 1<<30 {
				e.freq++
			}
			return
		}
		if victim < 0 || b[victim].leaf != 0 && (e.leaf == 0 || e.freq < b[victim].freq) {
			victim = i
		}
	}
	b[victim] = hotEntry{leaf: leaf, slot: uint16(slot), fp: fp, freq: 1}
	h.setTag(bi, victim, tag)
}

// forget drops the entry of slot of leaf after a speculative READ found
// another key there.
func (h *hotspotBuffer) forget(leaf transport.GAddr, slot int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	bi, _ := h.bucket(leaf, slot, 0)
	b := &h.buckets[bi]
	for i := range b {
		if b[i].leaf == leaf && int(b[i].slot) == slot {
			b[i] = hotEntry{}
			h.setTag(bi, i, 0)
		}
	}
}

// copyFrom makes h what o is (Chime.CopyCaches), bucket for bucket; both
// are nil (hotspot=0) or of one size. It copies only the buckets in use on
// either side, found by their tags words, a sixteenth of the buckets'
// bytes to read: DMTree's Figure 11 gives CHIME a 10 GiB cache, whose
// hotspot buffer a warm-up leaves mostly empty, and copying every bucket
// would touch every page of gigabytes.
func (h *hotspotBuffer) copyFrom(o *hotspotBuffer) {
	if h == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	for b, tags := range o.tags {
		if tags != 0 || h.tags[b] != 0 {
			h.buckets[b], h.tags[b] = o.buckets[b], tags
		}
	}
}

func (h *hotspotBuffer) bytes() uint64 {
	if h == nil {
		return 0
	}
	return uint64(len(h.buckets)*hotWays) * hotEntryBytes
}
