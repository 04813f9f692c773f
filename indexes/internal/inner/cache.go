package inner

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/dmbench/dmbench/internal/keyorder"

	"github.com/dmbench/dmbench/transport"
)

// The index cache, Sherman's, which Marlin keeps unchanged: each compute
// node caches copies of internal nodes, never leaves, in a structure
// ordered by key range so that one lookup finds the node of a level
// covering a key (Sherman uses a skiplist of [lowest, highest) ranges of
// its level-1 nodes; the DEX and Dolphin papers describe the upper levels
// as cached too). A cached node is never updated in place: a writer that
// rewrote a node, or a reader that fetched a fresh copy, replaces it; a
// traversal that finds a cached node stale (a child's fences do not cover
// the key) invalidates it and re-traverses from the root. When the budget
// is full an entry is evicted by the power of two random choices on
// access counts, as Sherman's evict_one does.

// CachedNode is an immutable copy of an internal node.
type CachedNode struct {
	Addr  transport.GAddr
	level int
	Image []byte // the node as read or written
	// low is the node's low fence, kept apart from the image so that
	// ordering the cache compares strings without slicing images.
	low string
	// high is the high fence's prefix, unbounded whether it is +inf: a
	// lookup, which finds the node by a low fence at or below the key,
	// checks the high one without a visit to the image.
	high      keyorder.Prefix
	unbounded bool
	// seps are the node's keys' big-endian words at byte off, the first
	// word in which keys the node covers may differ, and kids its
	// children. A search routes a key through them in a few cachelines
	// and does not visit the image, where a binary search over the
	// image's entries missed the processor's caches at every step: the
	// cached images are too many to stay in them, and those misses were
	// most of a warm search's time.
	seps, kids []uint64
	off        int
	freq       atomic.Uint64
	pos        int // index in nodeCache.all; guarded by nodeCache.mu
}

// newCachedNode is a cached copy of the internal node image at addr.
func newCachedNode(l *Layout, addr transport.GAddr, image []byte) *CachedNode {
	img := bytes.Clone(image)
	n := &CachedNode{Addr: addr, level: Level(img), Image: img, low: string(l.Low(img)),
		high: keyorder.Of(l.High(img)), unbounded: Unbounded(img)}
	if !n.unbounded {
		// Every key between the fences shares their common prefix, and so
		// every key the node holds or covers shares the prefix the low
		// fence has in common with the high one and all the keys.
		low := l.Low(img)
		shared := keyorder.CommonPrefix(low, l.High(img))
		for i := range Count(img) {
			shared = min(shared, keyorder.CommonPrefix(low, l.innerKey(img, i)))
		}
		n.off = min(shared&^7, max(l.KeySize-8, 0))
	}
	count := Count(img)
	words := make([]uint64, 2*count+1)
	n.seps, n.kids = words[:count:count], words[count:]
	for i := range count {
		n.seps[i] = keyorder.Word(l.innerKey(img, i), n.off)
	}
	for i := range n.kids {
		n.kids[i] = uint64(l.InnerChild(img, i))
	}
	return n
}

// coversFrom reports whether n covers key, of prefix kp, which is at or
// above n's low fence.
func (n *CachedNode) coversFrom(l *Layout, kp keyorder.Prefix, key []byte) bool {
	if n.unbounded {
		return true
	}
	if c := kp.Compare(n.high); c != 0 {
		return c < 0
	}
	return compareKeys(key, l.High(n.Image)) < 0
}

// childIndex is l.childIndex(n.Image, key) for a key n covers: the words
// at off of a covered key and of n's keys order them unless they tie, as
// every byte before off is the same in all of them.
func (n *CachedNode) childIndex(l *Layout, key []byte) int {
	w := keyorder.Word(key, n.off)
	lo, hi := 0, len(n.seps)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s := n.seps[m]; s < w || s == w && compareKeys(l.innerKey(n.Image, m), key) <= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// childRange is l.childRange(n.Image, i), its bounds read from n where
// they can be. It aliases the image.
func (n *CachedNode) childRange(l *Layout, i int) KeyRange {
	r := KeyRange{Known: true}
	if i == 0 {
		r.Lo = l.Low(n.Image)
	} else {
		r.Lo = l.innerKey(n.Image, i-1)
	}
	if i < len(n.seps) {
		r.Hi = l.innerKey(n.Image, i)
	} else {
		r.Hi = n.highOrNil(l)
	}
	return r
}

// highOrNil is l.HighOrNil(n.Image).
func (n *CachedNode) highOrNil(l *Layout) []byte {
	if n.unbounded {
		return nil
	}
	return l.High(n.Image)
}

// nodeCache is one compute node's index cache, shared by its clients. Its
// mutex is never held across a verb.
type nodeCache struct {
	l        *Layout
	capacity int // nodes

	mu     sync.RWMutex
	levels []keyorder.Runs[*CachedNode] // by level-1, ordered by low fence
	all    []*CachedNode
	// evicted says an insert has evicted: it drew from its client's
	// random source, which differs between compute nodes, so copyFrom
	// cannot give another node what its own searches would have left.
	evicted bool

	hits, lookups atomic.Uint64
}

func newNodeCache(l *Layout, budget uint64) *nodeCache {
	return &nodeCache{l: l, capacity: int(budget / uint64(l.InnerBytes))}
}

// key is n's place in its level: its low fence's prefix.
func (n *CachedNode) key() keyorder.Key {
	return keyorder.Key{P: keyorder.Of(unsafe.Slice(unsafe.StringData(n.low), len(n.low)))}
}

// byLow compares a cached node's low fence with low, when their prefixes
// tie. low may borrow a key's bytes: it is used for the call only, so a
// lookup allocates nothing.
func byLow(low string) keyorder.Tie[*CachedNode] {
	return func(n *CachedNode) int { return strings.Compare(n.low, low) }
}

// lookup returns the cached node of level lvl whose range covers key.
func (nc *nodeCache) lookup(lvl int, key []byte) *CachedNode {
	nc.mu.RLock()
	defer nc.mu.RUnlock()
	if lvl < 1 || lvl > len(nc.levels) {
		return nil
	}
	x := &nc.levels[lvl-1]
	kp := keyorder.Of(key)
	p, ok := x.Floor(keyorder.Key{P: kp}, byLow(unsafe.String(unsafe.SliceData(key), len(key))))
	if !ok {
		return nil
	}
	found := x.At(p)
	if !found.coversFrom(nc.l, kp, key) {
		return nil
	}
	found.freq.Add(1)
	return found
}

// insert caches a copy of the internal node image at addr, replacing any
// older copy of it, and evicts to stay within the budget.
func (nc *nodeCache) insert(addr transport.GAddr, image []byte, rng *rand.Rand) {
	if nc.capacity == 0 {
		return
	}
	n := newCachedNode(nc.l, addr, image)
	nc.mu.Lock()
	defer nc.mu.Unlock()
	for len(nc.levels) < n.level {
		nc.levels = append(nc.levels, keyorder.Runs[*CachedNode]{})
	}
	if old, ok := nc.levels[n.level-1].Put(n.key(), n, byLow(n.low)); ok {
		n.pos = old.pos
		n.freq.Store(old.freq.Load())
		nc.all[n.pos] = n
		return
	}
	n.pos = len(nc.all)
	nc.all = append(nc.all, n)
	for len(nc.all) > nc.capacity {
		nc.evicted = true
		a, b := nc.all[rng.IntN(len(nc.all))], nc.all[rng.IntN(len(nc.all))]
		if b.freq.Load() < a.freq.Load() {
			a = b
		}
		nc.removeLocked(a)
	}
}

// clone is a copy of n for another compute node's cache: the image,
// fences and routing words, which no one writes once n is cached, shared;
// the access count and the place in the eviction list, which that node's
// lookups and evictions change, its own.
func (n *CachedNode) clone() *CachedNode {
	c := &CachedNode{Addr: n.Addr, level: n.level, Image: n.Image, low: n.low, high: n.high,
		unbounded: n.unbounded, seps: n.seps, kids: n.kids, off: n.off, pos: n.pos}
	c.freq.Store(n.freq.Load())
	return c
}

// copyFrom makes nc a copy of from, a cache of the same budget: every
// node at the same place of its level's runs and of the eviction list,
// with its access count, and the same hit and lookup counts. A cache's
// lookups and inserts depend on nothing else, so the ones that brought
// from from the state nc is in now to its own would bring nc there too,
// unless one evicted: eviction draws from the client's random source,
// and then copyFrom reports false and leaves nc as it was.
func (nc *nodeCache) copyFrom(from *nodeCache) bool {
	from.mu.RLock()
	if from.evicted {
		from.mu.RUnlock()
		return false
	}
	all := make([]*CachedNode, len(from.all))
	for i, n := range from.all {
		all[i] = n.clone()
	}
	levels := make([]keyorder.Runs[*CachedNode], len(from.levels))
	for i := range from.levels {
		levels[i] = from.levels[i].Clone()
	}
	hits, lookups := from.hits.Load(), from.lookups.Load()
	from.mu.RUnlock()
	// The cloned runs still hold from's nodes; a Put under a node's own
	// key replaces it in place, leaving the runs split as they were.
	for _, n := range all {
		levels[n.level-1].Put(n.key(), n, byLow(n.low))
	}
	nc.mu.Lock()
	defer nc.mu.Unlock()
	nc.levels, nc.all = levels, all
	nc.hits.Store(hits)
	nc.lookups.Store(lookups)
	return true
}

// invalidate drops n if it is still the cached copy of its node.
func (nc *nodeCache) invalidate(n *CachedNode) {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	if n.pos < len(nc.all) && nc.all[n.pos] == n {
		nc.removeLocked(n)
	}
}

func (nc *nodeCache) removeLocked(n *CachedNode) {
	x := &nc.levels[n.level-1]
	if p, ok := x.Find(n.key(), byLow(n.low)); ok {
		x.Delete(p)
	}
	last := nc.all[len(nc.all)-1]
	nc.all[n.pos] = last
	last.pos = n.pos
	nc.all = nc.all[:len(nc.all)-1]
}

// bytes is the memory the cached nodes take.
func (nc *nodeCache) bytes() uint64 {
	nc.mu.RLock()
	defer nc.mu.RUnlock()
	return uint64(len(nc.all)) * uint64(nc.l.InnerBytes)
}
