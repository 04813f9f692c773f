package dex

import (
	"sync"
	"sync/atomic"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// Operations without the compute-side cache (cache=false), the first two
// steps of the ablation of section 8.3: every traversal reads its path
// from the memory pool and keeps nothing but the root's address. Shared
// nodes use the RDMA protocol of Algorithm 1 (optimistic reads of lock
// word, node, lock word; writes under the RDMA lock); with partitioning,
// nodes inside this compute node's partition are synchronised by local
// latches instead, with no RDMA atomics, as the cache's frames are.

// latch is the local optimistic lock of one node among the threads of a
// compute node (partitioning=true, cache=false): a writer holds mu across
// its verbs with ver odd; a reader validates ver around its READ.
type latch struct {
	mu  transport.Mutex
	ver atomic.Uint64
}

// latchTable maps node addresses to latches, sharded like the mapping
// table. Latches are never dropped, as nodes are never freed.
type latchTable struct {
	shards [mtShards]struct {
		mu sync.Mutex // never held across a verb
		m  map[transport.GAddr]*latch
	}
}

// get returns a's latch; the probe costs a large-hash-table lookup.
func (t *latchTable) get(ep transport.Endpoint, a transport.GAddr) *latch {
	ep.Compute(cost.CacheLookup())
	s := &t.shards[shardOf(a)]
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[transport.GAddr]*latch{}
	}
	lt := s.m[a]
	if lt == nil {
		lt = &latch{mu: transport.Mutex{Kind: transport.LockSpin}} // an OptLock, as a frame's
		s.m[a] = lt
	}
	return lt
}

func (t *latchTable) clear() {
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		s.m = nil
		s.mu.Unlock()
	}
}

// latched reports whether nodes are synchronised by local latches.
func (x *Index) latched() bool { return x.opt.partitioned && !x.opt.cached }

// held is a node locked for writing: its RDMA lock at version v when
// shared, its latch when latched.
type held struct {
	a      transport.GAddr
	v      uint64
	shared bool
	lt     *latch
}

// lockNode locks node a: the latch first (partitioning without the
// cache), then the RDMA lock when the node is shared. Shared nodes are
// latched too: a split can narrow a shared node into this compute node's
// partition while one of its threads still writes it as shared, and a
// thread that sees it owned takes the latch alone.
func (c *client) lockNode(a transport.GAddr, shared bool) (held, error) {
	h := held{a: a, shared: shared}
	if c.x.latched() {
		h.lt = c.cn.latches.get(c.ep, a)
		h.lt.mu.Lock(c.ep)
		h.lt.ver.Add(1)
	}
	if shared {
		v, err := c.x.lockRemote(c.ep, a)
		if err != nil {
			c.unlatch(h)
			return h, err
		}
		h.v = v
	}
	return h, nil
}

// unlockNode releases h, first writing img (nil: unchanged): a shared
// node with its body and then its lock word at the next version, an
// owned one without its lock word.
func (c *client) unlockNode(h held, img node) error {
	x := c.x
	var err error
	switch {
	case h.shared && img != nil:
		img.setLockWord(h.v + 2)
		err = x.unlockRemote(c.ep, h.a, img)
	case h.shared:
		err = x.releaseRemote(c.ep, h.a, h.v)
	case img != nil:
		err = x.writeBody(c.ep, h.a, img)
	}
	c.unlatch(h)
	return err
}

func (c *client) unlatch(h held) {
	if h.lt != nil {
		h.lt.ver.Add(1)
		h.lt.mu.Unlock()
	}
}

// readDirect reads node a for a traversal: with the RDMA optimistic lock
// when shared (Algorithm 1 lines 3-6, three READs), with one READ when
// owned; under latches the read is validated against the node's latch,
// retrying until consistent.
func (c *client) readDirect(a transport.GAddr, shared bool, dst node) error {
	var lt *latch
	if c.x.latched() {
		lt = c.cn.latches.get(c.ep, a)
	}
	for i := 0; ; i++ {
		c.retry(i)
		var v uint64
		if lt != nil {
			if v = lt.ver.Load(); v&1 != 0 {
				continue
			}
		}
		if shared {
			ok, err := c.x.readShared(c.ep, a, dst)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
		} else if err := c.ep.Read(dst, a); err != nil {
			return err
		}
		if lt == nil || lt.ver.Load() == v {
			return nil
		}
	}
}

// rootDirect returns the root's address, reading the root pointer when
// this compute node has not seen it yet. A root that has since been split
// still heads a subtree holding every key below its high fence; a key at
// or above it makes leafDirect read the pointer again.
func (c *client) rootDirect() (transport.GAddr, error) {
	if a := c.cn.rootAddr.Load(); a != 0 {
		return transport.GAddr(a), nil
	}
	a, err := c.x.readRoot(c.ep)
	if err != nil {
		return 0, err
	}
	c.cn.rootAddr.Store(uint64(a))
	return a, nil
}

// leafDirect reads key's path from the root down to level 1 and returns
// the address of key's leaf and whether it is shared; the caller reads
// the leaf as its operation needs. A node that does not cover key was
// split after its parent was read: the caller restarts.
func (c *client) leafDirect(key []byte) (transport.GAddr, bool, error) {
	x, l := c.x, &c.x.l
	parts := x.parts.Load()
	a, err := c.rootDirect()
	if err != nil {
		return 0, false, err
	}
	low, high := make([]byte, l.ks), []byte(nil)
	img := c.scratch(0)
	for depth := 0; ; depth++ {
		shared := x.sharedRange(parts, low, high)
		if err := c.readDirect(a, shared, img); err != nil {
			return 0, false, err
		}
		if !l.covers(img, key) {
			if depth == 0 {
				c.cn.rootAddr.Store(0)
			}
			return 0, false, errRestart
		}
		if img.level() == 0 {
			return a, shared, nil
		}
		c.ep.Compute(cost.NodeSearch(img.count()))
		i := l.innerFind(img, key)
		clow, chigh := l.childRange(img, i)
		low = append(low[:0], clow...)
		if chigh == nil {
			high = nil
		} else {
			high = append(c.fence[:0], chigh...)
			c.fence = high
		}
		a = transport.GAddr(l.child(img, i))
		if img.level() == 1 {
			return a, x.sharedRange(parts, low, high), nil
		}
	}
}

// onLeafDirect applies fn to key's leaf in the memory pool: a search or
// scan to an optimistic read of it, a write to a copy read under the
// leaf's lock and written back before the lock is released. A full leaf
// on insert (fn returns errRestart) is split top-down from the root
// (splitPathDirect) and the operation restarts. Deletes never merge.
func (c *client) onLeafDirect(key []byte, op opKind, fn leafOp) error {
	l := &c.x.l
	img := c.scratch(1)
	for i := 0; ; i++ {
		c.retry(i)
		a, shared, err := c.leafDirect(key)
		if err == errRestart {
			continue
		}
		if err != nil {
			return err
		}
		if op == opSearch || op == opScan {
			if err := c.readDirect(a, shared, img); err != nil {
				return err
			}
			if !l.covers(img, key) {
				continue
			}
			c.ep.Compute(cost.NodeSearch(img.count()))
			_, err := fn(img)
			return err
		}
		h, err := c.lockNode(a, shared)
		if err != nil {
			return err
		}
		if err := c.ep.Read(img, a); err != nil {
			c.unlatch(h)
			return err
		}
		if !l.covers(img, key) {
			if err := c.unlockNode(h, nil); err != nil {
				return err
			}
			continue
		}
		c.ep.Compute(cost.NodeSearch(img.count()))
		changed, err := fn(img)
		var out node
		if changed {
			out = img
		}
		if uerr := c.unlockNode(h, out); uerr != nil {
			return uerr
		}
		if err == errRestart {
			if err := c.splitPathDirect(key); err != nil {
				return err
			}
			continue
		}
		return err
	}
}

// scratch returns the client's i-th node buffer: no image outlives the
// operation that read it, so one coroutine reuses two (the path's nodes,
// the leaf) instead of allocating a node per READ.
func (c *client) scratch(i int) node {
	if c.bufs[i] == nil {
		c.bufs[i] = make(node, NodeBytes)
	}
	return c.bufs[i]
}

// splitPathDirect splits every full node on key's path, one lock-coupled
// walk from the root per split (section 7's eager split, applied when an
// insert finds its leaf full).
func (c *client) splitPathDirect(key []byte) error {
	parts := c.x.parts.Load()
	for {
		again, err := c.splitSharedPath(parts, key, &c.x.l)
		if err != nil || !again {
			return err
		}
	}
}
