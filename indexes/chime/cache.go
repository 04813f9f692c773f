package chime

import (
	"bytes"
	"hash/fnv"
	"sync"
	"sync/atomic"

	"github.com/google/btree"

	"github.com/dmbench/dmbench/transport"
)

// nodeCache is one compute node's cache of internal nodes, shared by the
// clients of that node: copies keyed by (level, low fence), so the
// level-1 node covering a key is one ordered lookup, as Sherman's and
// CHIME's index caches do. Entries may be stale; readers validate against
// the fences they find in memory and invalidate.
type nodeCache struct {
	mu       sync.RWMutex // never held across a verb
	tree     *btree.BTreeG[*inner]
	max      int // nodes that fit the budget
	hits     atomic.Uint64
	lookups  atomic.Uint64
	rootNode atomic.Pointer[inner]
}

func lessInner(a, b *inner) bool {
	if a.level != b.level {
		return a.level < b.level
	}
	if a.lowInf != b.lowInf {
		return a.lowInf
	}
	return bytes.Compare(a.low, b.low) < 0
}

func newNodeCache(budget uint64, nodeBytes int) *nodeCache {
	return &nodeCache{tree: btree.NewG(16, lessInner), max: max(1, int(budget/uint64(nodeBytes)))}
}

// find returns the cached node of level covering key.
func (c *nodeCache) find(level int, key []byte) *inner {
	c.lookups.Add(1)
	c.mu.RLock()
	defer c.mu.RUnlock()
	var got *inner
	c.tree.DescendLessOrEqual(&inner{level: level, low: key}, func(n *inner) bool {
		if n.level == level && n.covers(key) {
			got = n
		}
		return false
	})
	if got != nil {
		c.hits.Add(1)
	}
	return got
}

// put caches n, evicting a node near victim when the budget is spent.
func (c *nodeCache) put(n *inner, victim []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, had := c.tree.Get(n); !had && c.tree.Len() >= c.max {
		var evict *inner
		c.tree.DescendLessOrEqual(&inner{level: 1, low: victim}, func(m *inner) bool {
			evict = m
			return false
		})
		if evict == nil {
			evict, _ = c.tree.Min()
		}
		c.tree.Delete(evict)
	}
	c.tree.ReplaceOrInsert(n)
}

// invalidate drops n if it is still the cached copy.
func (c *nodeCache) invalidate(n *inner) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur, ok := c.tree.Get(n); ok && cur.addr == n.addr && cur.version == n.version {
		c.tree.Delete(n)
	}
}

func (c *nodeCache) bytes(nodeBytes int) uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return uint64(c.tree.Len() * nodeBytes)
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
	return &hotspotBuffer{buckets: make([][hotWays]hotEntry, n)}
}

// hotFingerprint is the 2-byte fingerprint of a key (CHIME's key2fp).
func hotFingerprint(key []byte) uint16 {
	f := fnv.New32a()
	f.Write(key)
	return uint16(f.Sum32()>>16) | 1
}

func (h *hotspotBuffer) bucket(leaf transport.GAddr, slot int) *[hotWays]hotEntry {
	x := (uint64(leaf) ^ uint64(slot)*0x9e3779b97f4a7c15) * 0xff51afd7ed558ccd
	return &h.buckets[(x>>17)%uint64(len(h.buckets))]
}

// lookup returns the slot among slots that most often held a key of
// fingerprint fp, probing one bucket per slot.
func (h *hotspotBuffer) lookup(leaf transport.GAddr, slots []int, fp uint16) (int, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	best, freq := -1, int32(0)
	for _, s := range slots {
		b := h.bucket(leaf, s)
		for i := range b {
			if e := &b[i]; e.leaf == leaf && int(e.slot) == s && e.fp == fp && e.freq > freq {
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
	b := h.bucket(leaf, slot)
	victim := -1
	for i := range b {
		e := &b[i]
		if e.leaf == leaf && int(e.slot) == slot {
			if e.fp != fp {
				e.fp, e.freq = fp, 1
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
}

// forget drops the entry of slot of leaf after a speculative READ found
// another key there.
func (h *hotspotBuffer) forget(leaf transport.GAddr, slot int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	b := h.bucket(leaf, slot)
	for i := range b {
		if b[i].leaf == leaf && int(b[i].slot) == slot {
			b[i] = hotEntry{}
		}
	}
}

func (h *hotspotBuffer) bytes() uint64 {
	if h == nil {
		return 0
	}
	return uint64(len(h.buckets)*hotWays) * hotEntryBytes
}
