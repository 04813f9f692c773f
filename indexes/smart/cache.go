package smart

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// radixCache is one compute node's cache of internal nodes, shared by its
// clients (SMART's RadixCache): copies of the slot arrays of remote nodes,
// each filed under its node's prefix, the key bytes above its slots (the
// artifact's add_to_cache files a copy under the reading key's bytes
// above the node's depth followed by the header's partial key bytes). A
// lookup returns the deepest copy on a key's path that has a slot for the
// key's next byte, whichever of the copies above it are cached (the
// artifact's search_from_cache collects every copy along the key and
// tries the deepest first): evicting a node leaves its cached descendants
// reachable. Every node a client reads at its own depth is admitted, but
// the root node (the artifact's add_to_cache returns for it), and the
// root slot is not cached either: a lookup that finds no copy READs the
// root slot, as the artifact's get_root_ptr does on every cache miss.
//
// Space is accounted in bytes against the budget. Admission and eviction
// go through one FIFO queue and one free-byte counter shared by every
// client of the compute node, as in the artifact; DEX (section 8.2) found
// that queue to be where SMART's threads spend half their cycles at 144
// threads. The artifact's queue is a tbb::concurrent_queue
// (src/RadixCache.cpp, node_queue) and its counter an atomic: a push
// takes a ticket by fetch-and-add on the queue's tail counter, and the
// ticket picks one of the queue's eight micro-queues, where the push
// spins until the pushes before it on that micro-queue are done
// (concurrent_queue's micro_queue::push, spin_wait_until_my_turn). Here
// each micro-queue is a ticket lock (transport.LockTicket), taken in
// ticket order, and the fetch-and-adds on the tail and on the free-byte
// counter are touches of two contended lines (transport.Line), which
// serialise the admissions of all the node's cores: clients that admit
// nodes at the same time queue in virtual time, and a crowded
// micro-queue's handoff grows with the cores spinning on it.
type radixCache struct {
	budget uint64

	mu     sync.RWMutex // guards byAddr, byPrefix and used; never held across a verb
	byAddr map[transport.GAddr]*cnode
	// byPrefix files the copies by their prefixes' hashes (prefixHash),
	// which a lookup computes without building a string and the map
	// compares without loading a string's bytes; copies whose prefixes
	// share a hash are chained through cnode.next.
	byPrefix map[uint64]*cnode
	// perLen counts byPrefix's entries by prefix length, so that a lookup
	// skips the lengths no copy is filed under without hashing the key.
	perLen []int
	// filed is a presence filter over byPrefix's prefixes, tested before
	// a lookup hashes a prefix into byPrefix: at scale that map misses
	// the CPU's caches on most probes, and most of the prefix lengths a
	// lookup tries hold no copy for the key.
	filed prefixFilter
	used  uint64

	// The shared FIFO queue: its tail ticket counter (the value and its
	// cache line), its micro-queues' turns, and (under mu) its order; and
	// the line of the free-byte counter.
	tail     atomic.Uint64
	tailLine transport.Line
	micro    [microQueues]transport.Mutex
	fifo     []*cnode
	head     int
	freeLine transport.Line

	hits, lookups atomic.Uint64
}

// cnode is a cached copy of one internal node. The fields a lookup reads
// come first, and its slots follow it in the same block (newCnode).
type cnode struct {
	lead   uint64   // leadOf(prefix), checked before the string's bytes
	next   *cnode   // the next copy filed under hash
	slots  []uint64 // capacity(hdr.typ) slots
	addr   transport.GAddr
	prefix string // the key bytes above the node's slots
	hash   uint64 // prefixHash(prefix)
	hdr    header
	size   uint64
	gone   bool // evicted, invalidated or replaced (under radixCache.mu)
}

// newCnode allocates a copy of a node of type typ, its slots in the same
// block: a lookup's loads of the copy and of its slots then fall on
// neighbouring lines of one page, where two blocks would each miss the
// CPU's caches.
func newCnode(typ int) *cnode {
	switch typ {
	case 0:
		b := new(struct {
			cnode
			s [4]uint64
		})
		b.slots = b.s[:]
		return &b.cnode
	case 1:
		b := new(struct {
			cnode
			s [8]uint64
		})
		b.slots = b.s[:]
		return &b.cnode
	case 2:
		b := new(struct {
			cnode
			s [16]uint64
		})
		b.slots = b.s[:]
		return &b.cnode
	case 3:
		b := new(struct {
			cnode
			s [32]uint64
		})
		b.slots = b.s[:]
		return &b.cnode
	case 4:
		b := new(struct {
			cnode
			s [64]uint64
		})
		b.slots = b.s[:]
		return &b.cnode
	case 5:
		b := new(struct {
			cnode
			s [128]uint64
		})
		b.slots = b.s[:]
		return &b.cnode
	}
	b := new(struct {
		cnode
		s [256]uint64
	})
	b.slots = b.s[:]
	return &b.cnode
}

// cnodeBytes is a cached node's footprint: address, header, depth and
// queue bookkeeping, and the slots of its type.
func cnodeBytes(typ int) uint64 { return 32 + 8*uint64(capacity(typ)) }

// microQueues is a tbb::concurrent_queue's number of micro-queues
// (concurrent_queue_rep's n_queue).
const microQueues = 8

func newRadixCache(budget uint64) *radixCache {
	c := &radixCache{budget: budget, byAddr: map[transport.GAddr]*cnode{}, byPrefix: map[uint64]*cnode{}}
	for i := range c.micro {
		c.micro[i].Kind = transport.LockTicket
	}
	return c
}

// copyFrom makes c, the unused cache of compute node n, what it would be
// had n run the searches that built src. Copies are copied afresh, as a
// copy's chain link and gone flag change while it is cached; they are
// queued in src's FIFO order, gone ones included (popping one still
// costs a line), at the same positions, and filed under the same chains
// in the same order, which are rebuilt from the queue rather than by
// ranging over src's maps, so no map order leaks in. The filter, byte
// count, ticket counter and hit and lookup counters are copied by value,
// and the two lines moved to n's cores (transport.Line.CopyTo); their
// free time is n's too, as the warm-up's searches all run outside
// virtual time, at one instant. The micro-queues are left as they are: a
// free Mutex keeps nothing its next Lock reads. Neither cache may be in
// use.
func (c *radixCache) copyFrom(src *radixCache, n transport.NodeID) {
	src.mu.RLock()
	defer src.mu.RUnlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	// Every copy that is not gone is filed under its address and its
	// prefix and queued after head (add queues every copy, and eviction
	// drops what it pops), so the queue holds all the copies to file.
	fresh := make(map[*cnode]*cnode, len(src.fifo)-src.head)
	c.fifo = make([]*cnode, len(src.fifo))
	for i, o := range src.fifo[src.head:] {
		cn := newCnode(o.hdr.typ)
		slots := cn.slots[:copy(cn.slots, o.slots)]
		*cn = *o
		cn.slots, cn.next = slots, nil
		fresh[o] = cn
		c.fifo[src.head+i] = cn
	}
	c.head = src.head
	c.byAddr = make(map[transport.GAddr]*cnode, len(src.byAddr))
	c.byPrefix = make(map[uint64]*cnode, len(src.byPrefix))
	for _, cn := range c.fifo[c.head:] {
		if cn.gone {
			continue
		}
		c.byAddr[cn.addr] = cn
		if c.byPrefix[cn.hash] != nil {
			continue // its chain is copied already
		}
		var last *cnode
		for o := src.byPrefix[cn.hash]; o != nil; o = o.next {
			if last == nil {
				c.byPrefix[cn.hash] = fresh[o]
			} else {
				last.next = fresh[o]
			}
			last = fresh[o]
		}
	}
	c.perLen = slices.Clone(src.perLen)
	c.filed = prefixFilter{bits: slices.Clone(src.filed.bits), counts: slices.Clone(src.filed.counts)}
	c.used = src.used
	c.tail.Store(src.tail.Load())
	src.tailLine.CopyTo(&c.tailLine, n)
	src.freeLine.CopyTo(&c.freeLine, n)
	c.hits.Store(src.hits.Load())
	c.lookups.Store(src.lookups.Load())
}

// hop is where a traversal continues: the slot p read from address pPtr,
// leading to the key's byte depth. node is the cached node the slot came
// from (nil when it came from memory), and cached says the slot came from
// the cache and may be stale. For a slot read from memory, at numbers the
// READ from which on its path is known to be the key's: the slot's own
// READ, or the at of the node it was read in (see descend).
type hop struct {
	pPtr   transport.GAddr
	p      uint64
	depth  int
	node   *cnode
	cached bool
	at     int64
}

// lookup returns the deepest cached slot on key's path, the probes it
// made, and false when no copy on the path has a slot for the key's byte
// below it.
func (c *radixCache) lookup(key []byte) (hop, int, bool) {
	return c.deepest(key, len(key))
}

// deepest returns the slot for key[d] of the copy filed under key[:d],
// for the largest d below end that has one.
func (c *radixCache) deepest(key []byte, end int) (hop, int, bool) {
	c.lookups.Add(1)
	probes := 0
	c.mu.RLock()
	defer c.mu.RUnlock()
	for d := min(end, len(c.perLen)) - 1; d > 0; d-- {
		if c.perLen[d] == 0 {
			continue
		}
		h := prefixHash(key[:d])
		if !c.filed.mayHold(h) {
			continue
		}
		n := filedUnder(c, h, key[:d])
		if n == nil {
			continue
		}
		i, k := findSlot(n.slots, key[d])
		probes += k
		if i < 0 || absent(n.slots[i]) {
			continue
		}
		c.hits.Add(1)
		return hop{pPtr: slotAddr(n.addr, i), p: n.slots[i], depth: d + 1, node: n, cached: true}, probes, true
	}
	return hop{}, probes, false
}

// findSlot returns the index of the slot whose partial key is b (empty
// slots skipped), or -1, and how many slots it looked at.
func findSlot(slots []uint64, b byte) (int, int) {
	for i, s := range slots {
		if !isEmpty(s) && partialOf(s) == b {
			return i, i + 1
		}
	}
	return -1, len(slots)
}

// add admits a copy of the node at addr, which key reached, replacing an
// older copy of the node or of another node with its prefix, and evicts
// from the FIFO's head while the cache is over budget. The root node is
// not admitted.
func (c *radixCache) add(ep transport.Endpoint, key []byte, addr transport.GAddr, n node) {
	if c.budget == 0 || n.hdr.depth == 0 {
		return
	}
	cap := min(capacity(n.hdr.typ), len(n.slots))
	prefix := string(key[:n.hdr.depth]) + string(n.hdr.prefix[:n.hdr.plen])
	if cnodeBytes(n.hdr.typ) > c.budget {
		return
	}
	h := prefixHash(prefix)
	cn := newCnode(n.hdr.typ)
	cn.slots = cn.slots[:copy(cn.slots, n.slots[:cap])]
	cn.addr, cn.prefix, cn.hash, cn.lead, cn.hdr, cn.size = addr, prefix, h, leadOf(prefix), n.hdr, cnodeBytes(n.hdr.typ)
	// The ticket: a fetch-and-add on the queue's tail counter.
	c.tailLine.Touch(ep)
	mq := &c.micro[c.tail.Add(1)%microQueues]
	mq.Lock(ep)
	ep.Compute(cost.CachelineTransfer()) // the micro-queue's tail line
	c.mu.Lock()
	c.fifo = append(c.fifo, cn)
	c.drop(c.byAddr[addr])
	c.drop(filedUnder(c, h, prefix))
	c.byAddr[addr] = cn
	cn.next = c.byPrefix[h]
	c.byPrefix[h] = cn
	for len(c.perLen) <= len(prefix) {
		c.perLen = append(c.perLen, 0)
	}
	c.perLen[len(prefix)]++
	c.filed.add(h)
	c.used += cn.size
	pops := 0
	for c.used > c.budget && c.head < len(c.fifo) {
		v := c.fifo[c.head]
		c.fifo[c.head] = nil
		c.head++
		pops++
		c.drop(v)
	}
	if c.head > 1024 && c.head*2 > len(c.fifo) {
		c.fifo = append([]*cnode(nil), c.fifo[c.head:]...)
		c.head = 0
	}
	c.mu.Unlock()
	mq.Unlock()
	// The free-byte counter's fetch-and-add, and a line per node evicted
	// from the queue's head.
	c.freeLine.Touch(ep)
	if pops > 0 {
		ep.Compute(int64(pops) * cost.CachelineTransfer())
	}
}

// drop removes the copy n unless it is gone already; the caller holds mu.
func (c *radixCache) drop(n *cnode) {
	if n == nil || n.gone {
		return
	}
	n.gone = true
	// A copy not gone is the one filed under its address and its prefix:
	// add drops the copies it replaces.
	delete(c.byAddr, n.addr)
	c.unfile(n)
	c.perLen[len(n.prefix)]--
	c.filed.remove(n.hash)
	c.used -= n.size
}

// invalidate drops a stale copy (a slot of it led to a node or leaf that
// no longer matches).
func (c *radixCache) invalidate(n *cnode) {
	if n == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drop(n)
}

func (c *radixCache) bytes() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.used
}

// invalidateAddr drops the cached copy of the node at a, if any.
func (c *radixCache) invalidateAddr(a transport.GAddr) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drop(c.byAddr[a])
}

// lookupRange returns the deepest cached slot whose subtree holds every
// key of [lo, hi], where lcp is the length of their common prefix: the
// cached entry a range query starts from.
func (c *radixCache) lookupRange(lo []byte, lcp int) (hop, int, bool) {
	return c.deepest(lo, lcp)
}

// filedUnder returns c's copy filed under prefix p, whose hash is h, or
// nil; the caller holds mu.
func filedUnder[T string | []byte](c *radixCache, h uint64, p T) *cnode {
	lead := leadOf(p)
	for n := c.byPrefix[h]; n != nil; n = n.next {
		if n.lead == lead && (len(p) <= leadBytes || n.prefix == string(p)) {
			return n
		}
	}
	return nil
}

// unfile takes n out of byPrefix; the caller holds mu.
func (c *radixCache) unfile(n *cnode) {
	first := c.byPrefix[n.hash]
	switch {
	case first == n && n.next == nil:
		delete(c.byPrefix, n.hash)
	case first == n:
		c.byPrefix[n.hash] = n.next
	default:
		for first.next != n {
			first = first.next
		}
		first.next = n.next
	}
	n.next = nil
}

// prefixHash hashes a prefix: FNV-1a, its bits then spread by a
// multiplication and a shift (splitmix's finaliser), as prefixFilter
// takes its top bits.
func prefixHash[T string | []byte](p T) uint64 {
	h := uint64(14695981039346656037)
	for i := range len(p) {
		h = (h ^ uint64(p[i])) * 1099511628211
	}
	h = (h ^ h>>30) * 0xbf58476d1ce4e5b9
	h = (h ^ h>>27) * 0x94d049bb133111eb
	return h ^ h>>31
}

// leadOf packs a prefix's length (below 256, as keys are) and its first
// leadBytes bytes: a copy's lead decides most comparisons of its prefix
// with a key's, and all of a short one's, without loading the prefix's
// bytes, which at scale miss the CPU's caches.
func leadOf[T string | []byte](p T) uint64 {
	l := uint64(len(p))
	for i := range min(len(p), leadBytes) {
		l |= uint64(p[i]) << (8 + 8*i)
	}
	return l
}

const leadBytes = 7

// prefixFilter is a counting filter over a set of prefix hashes: a bit
// per bucket, set while the bucket counts a prefix, so a lookup tests
// only the bits, small enough to stay in the CPU's cache. A prefix it
// does not hold is absent; one it holds may be absent too (buckets are
// shared).
type prefixFilter struct {
	bits   []uint64
	counts []uint8 // saturated counts are never decremented, so their bits stay set
}

// A prefixFilter has 2^filterLog buckets: 64 KiB of bits, 512 KiB of
// counts.
const (
	filterLog     = 19
	filterBuckets = 1 << filterLog
)

func filterBucket(h uint64) uint64 { return h >> (64 - filterLog) }

func (f *prefixFilter) mayHold(h uint64) bool {
	i := filterBucket(h)
	return f.bits != nil && f.bits[i/64]&(1<<(i%64)) != 0
}

func (f *prefixFilter) add(h uint64) {
	if f.bits == nil {
		f.bits = make([]uint64, filterBuckets/64)
		f.counts = make([]uint8, filterBuckets)
	}
	i := filterBucket(h)
	if f.counts[i] < math.MaxUint8 {
		f.counts[i]++
	}
	f.bits[i/64] |= 1 << (i % 64)
}

func (f *prefixFilter) remove(h uint64) {
	i := filterBucket(h)
	switch f.counts[i] {
	case math.MaxUint8:
	case 1:
		f.counts[i] = 0
		f.bits[i/64] &^= 1 << (i % 64)
	default:
		f.counts[i]--
	}
}
