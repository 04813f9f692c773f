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

// hotspotBuffer is CHIME's hotspot buffer: the part of the cache that
// remembers in which leaf slot a hot key was last found, so that a search
// for it can READ that one entry speculatively. It is set-associative with
// a small frequency counter per way: a new key takes a way only after the
// way's counter has decayed to zero, so one-off keys do not evict hot ones.
type hotspotBuffer struct {
	mu   sync.Mutex // never held across a verb
	sets [][hotWays]hotWay
}

const hotWays = 4

type hotWay struct {
	key   string
	leaf  transport.GAddr
	slot  uint16
	count uint8
}

// hotEntryBytes is what one way costs: key, leaf address, slot, counter.
func hotEntryBytes(keySize int) uint64 { return uint64(keySize + 8 + 2 + 1) }

func newHotspotBuffer(budget uint64, keySize int) *hotspotBuffer {
	sets := int(budget / (hotWays * hotEntryBytes(keySize)))
	if sets == 0 {
		return nil
	}
	return &hotspotBuffer{sets: make([][hotWays]hotWay, sets)}
}

func (h *hotspotBuffer) set(key []byte) *[hotWays]hotWay {
	f := fnv.New32a()
	f.Write(key)
	return &h.sets[f.Sum32()%uint32(len(h.sets))]
}

// lookup returns the slot key was last seen in.
func (h *hotspotBuffer) lookup(key []byte) (transport.GAddr, int, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.set(key)
	for i := range s {
		if s[i].count > 0 && s[i].key == string(key) {
			return s[i].leaf, int(s[i].slot), true
		}
	}
	return 0, 0, false
}

// record notes that key was found in slot of leaf.
func (h *hotspotBuffer) record(key []byte, leaf transport.GAddr, slot int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.set(key)
	low := 0
	for i := range s {
		if s[i].count > 0 && s[i].key == string(key) {
			s[i].leaf, s[i].slot = leaf, uint16(slot)
			s[i].count = min(s[i].count+1, 255)
			return
		}
		if s[i].count < s[low].count {
			low = i
		}
	}
	if s[low].count > 0 {
		s[low].count--
		return
	}
	s[low] = hotWay{key: string(key), leaf: leaf, slot: uint16(slot), count: 1}
}

// forget drops key after its speculative READ missed.
func (h *hotspotBuffer) forget(key []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.set(key)
	for i := range s {
		if s[i].key == string(key) {
			s[i] = hotWay{}
		}
	}
}

func (h *hotspotBuffer) bytes(keySize int) uint64 {
	if h == nil {
		return 0
	}
	return uint64(len(h.sets)*hotWays) * hotEntryBytes(keySize)
}
