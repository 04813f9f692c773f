package smart

import (
	"sync"
	"sync/atomic"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// radixCache is one compute node's cache of internal nodes, shared by its
// clients (SMART's RadixCache): copies of the slot arrays of remote nodes,
// reached from the root slot by following cached slots, so that a lookup
// returns the deepest cached slot on a key's path. Every node a client
// reads at its own depth is admitted.
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

	mu    sync.RWMutex // guards nodes and used; never held across a verb
	nodes map[transport.GAddr]*cnode
	used  uint64
	root  atomic.Uint64 // the root slot as last read; 0 when unknown

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

// cnode is a cached copy of one internal node.
type cnode struct {
	addr  transport.GAddr
	hdr   header
	slots []uint64 // capacity(hdr.typ) slots
	size  uint64
	gone  bool // evicted, invalidated or replaced (under radixCache.mu)
}

// cnodeBytes is a cached node's footprint: address, header, depth and
// queue bookkeeping, and the slots of its type.
func cnodeBytes(typ int) uint64 { return 32 + 8*uint64(capacity(typ)) }

// microQueues is a tbb::concurrent_queue's number of micro-queues
// (concurrent_queue_rep's n_queue).
const microQueues = 8

func newRadixCache(budget uint64) *radixCache {
	c := &radixCache{budget: budget, nodes: map[transport.GAddr]*cnode{}}
	for i := range c.micro {
		c.micro[i].Kind = transport.LockTicket
	}
	return c
}

// hop is where a traversal continues: the slot p read from address pPtr,
// leading to the key's byte depth. node is the cached node the slot came
// from (nil when it came from memory or is the cached root slot), and
// cached says the slot came from the cache and may be stale. For a slot
// read from memory, at numbers the READ from which on its path is known
// to be the key's: the slot's own READ, or the at of the node it was
// read in (see descend).
type hop struct {
	pPtr   transport.GAddr
	p      uint64
	depth  int
	node   *cnode
	cached bool
	at     int64
}

// lookup walks the cache along key from the root slot and returns the
// deepest cached slot with key's next byte, the probes it made, and false
// when not even the root slot is known.
func (c *radixCache) lookup(key []byte, rootPtr transport.GAddr) (hop, int, bool) {
	c.lookups.Add(1)
	root := c.root.Load()
	if root == 0 {
		return hop{}, 0, false
	}
	best := hop{pPtr: rootPtr, p: root, cached: true}
	probes := 0
	c.mu.RLock()
	defer c.mu.RUnlock()
	for isNode(best.p) {
		n := c.nodes[slotTarget(best.p)]
		if n == nil || n.hdr.depth != best.depth {
			break
		}
		d := n.hdr.depth + n.hdr.plen
		if d >= len(key) || !prefixMatches(n.hdr, key) {
			break
		}
		i, k := findSlot(n.slots, key[d])
		probes += k
		if i < 0 || absent(n.slots[i]) {
			break
		}
		best = hop{pPtr: slotAddr(n.addr, i), p: n.slots[i], depth: d + 1, node: n, cached: true}
	}
	if best.node != nil {
		c.hits.Add(1)
	}
	return best, probes, true
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

func prefixMatches(h header, key []byte) bool {
	for i := range h.plen {
		if h.depth+i >= len(key) || key[h.depth+i] != h.prefix[i] {
			return false
		}
	}
	return true
}

// setRoot records the root slot as read from memory.
func (c *radixCache) setRoot(s uint64) { c.root.Store(s) }

// add admits a copy of the node at addr, replacing an older copy, and
// evicts from the FIFO's head while the cache is over budget.
func (c *radixCache) add(ep transport.Endpoint, addr transport.GAddr, n node) {
	if c.budget == 0 {
		return
	}
	cap := min(capacity(n.hdr.typ), len(n.slots))
	cn := &cnode{addr: addr, hdr: n.hdr, slots: append([]uint64(nil), n.slots[:cap]...), size: cnodeBytes(n.hdr.typ)}
	if cn.size > c.budget {
		return
	}
	// The ticket: a fetch-and-add on the queue's tail counter.
	c.tailLine.Touch(ep)
	mq := &c.micro[c.tail.Add(1)%microQueues]
	mq.Lock(ep)
	ep.Compute(cost.CachelineTransfer()) // the micro-queue's tail line
	c.mu.Lock()
	c.fifo = append(c.fifo, cn)
	if old := c.nodes[addr]; old != nil {
		old.gone = true
		c.used -= old.size
	}
	c.nodes[addr] = cn
	c.used += cn.size
	pops := 0
	for c.used > c.budget && c.head < len(c.fifo) {
		v := c.fifo[c.head]
		c.fifo[c.head] = nil
		c.head++
		pops++
		if v.gone {
			continue
		}
		v.gone = true
		delete(c.nodes, v.addr)
		c.used -= v.size
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

// invalidate drops a stale copy (its slot led to a node or leaf that no
// longer matches), or forgets the root slot when n is nil.
func (c *radixCache) invalidate(n *cnode) {
	if n == nil {
		c.root.Store(0)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !n.gone && c.nodes[n.addr] == n {
		n.gone = true
		delete(c.nodes, n.addr)
		c.used -= n.size
	}
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
	if n := c.nodes[a]; n != nil {
		n.gone = true
		delete(c.nodes, a)
		c.used -= n.size
	}
}

// lookupRange returns the deepest cached slot whose subtree holds every
// key of [lo, hi], where lcp is the length of their common prefix: the
// cached entry a range query starts from.
func (c *radixCache) lookupRange(lo []byte, lcp int, rootPtr transport.GAddr) (hop, int, bool) {
	c.lookups.Add(1)
	root := c.root.Load()
	if root == 0 {
		return hop{}, 0, false
	}
	best := hop{pPtr: rootPtr, p: root, cached: true}
	probes := 0
	c.mu.RLock()
	defer c.mu.RUnlock()
	for isNode(best.p) {
		n := c.nodes[slotTarget(best.p)]
		if n == nil || n.hdr.depth != best.depth {
			break
		}
		d := n.hdr.depth + n.hdr.plen
		if d >= lcp || !prefixMatches(n.hdr, lo) {
			break
		}
		i, k := findSlot(n.slots, lo[d])
		probes += k
		if i < 0 || absent(n.slots[i]) {
			break
		}
		best = hop{pPtr: slotAddr(n.addr, i), p: n.slots[i], depth: d + 1, node: n, cached: true}
	}
	if best.node != nil {
		c.hits.Add(1)
	}
	return best, probes, true
}
