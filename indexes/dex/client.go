package dex

import (
	"bytes"
	"errors"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

// opKind is the operation a traversal serves.
type opKind uint8

const (
	opSearch opKind = iota
	opUpdate
	opInsert
	opDelete
	opScan
)

// client is one coroutine's handle on the tree.
type client struct {
	x     *Index
	ep    transport.Endpoint
	cn    *computeNode
	free  []*frame // thread-local free pages (section 5.1)
	epoch uint64
	// fetchLat and rpcLat are the moving averages of section 6.1: the
	// sampled latencies of fetching a missed inner node and of offloading
	// below one. The artifact keeps them per thread; DEX has no
	// coroutines, so its runs have one client per thread and a client's
	// averages are its thread's.
	fetchLat, rpcLat movingAvg
	// forceAdmit admits the next leaf whatever the admission policy (a
	// leaf that must split lives in the cache); noOffload makes the
	// current operation fall back from offloading after an SMO.
	forceAdmit, noOffload bool
	// bufs and fence are the node buffers and the high-fence copy of
	// operations without the cache (direct.go).
	bufs  [2]node
	fence []byte
	// fences holds the copies of a node's and a child's fence keys that
	// descend checks against the partitions, reused from node to node.
	fences [4][]byte
}

func (x *Index) newClient(ep transport.Endpoint) *client {
	c := &client{x: x, ep: ep}
	if int(ep.Node()) < len(x.env.Fabric.Config().MemoryNodeIDs())+len(x.comps) && x.env.Fabric.Config().Role(ep.Node()) == transport.RoleCompute {
		c.cn = x.compute(ep.Node())
		c.epoch = c.cn.epoch.Load()
	}
	return c
}

// errRestart makes an operation re-traverse from the root.
var errRestart = errors.New("dex: restart")

// leafRef is where a traversal ends: a cached leaf frame read at version
// v, or a leaf image fetched without admission (temp) whose I/O flag the
// caller holds and must release.
type leafRef struct {
	f    *frame
	v    uint64
	temp node
	addr transport.GAddr
	// parent is the cached parent of the leaf (nil when the leaf is the
	// root), read at version pv.
	parent *frame
	pv     uint64
}

// begin starts an operation: it drops stale free pages after a cache
// reset.
func (c *client) begin() {
	c.noOffload = false
	if e := c.cn.epoch.Load(); e != c.epoch {
		c.free, c.epoch = nil, e
	}
}

// retry waits before attempt i of an operation.
func (c *client) retry(i int) {
	if i == 0 {
		return
	}
	backoff(c.ep, i)
}

// find descends to the leaf covering key (Algorithm 1) or, when it
// offloads, returns the memory node's answer. val is the value of a write.
func (c *client) find(key, val []byte, op opKind) (leafRef, *offloadReply, error) {
	for i := 0; ; i++ {
		c.retry(i)
		ref, rep, err := c.descend(key, val, op)
		if err == errRestart {
			continue
		}
		return ref, rep, err
	}
}

// rootFrame returns the cached root, fetching it on a miss.
func (c *client) rootFrame() (*frame, error) {
	if f := c.cn.root.Load(); f != nil {
		return f, nil
	}
	return c.installRoot()
}

// installRoot reads the root pointer and caches the root node.
func (c *client) installRoot() (*frame, error) {
	cn, x := c.cn, c.x
	cn.rootMu.Lock(c.ep)
	defer cn.rootMu.Unlock()
	a, err := x.readRoot(c.ep)
	if err != nil {
		return nil, err
	}
	if f := cn.root.Load(); f != nil && transport.GAddr(f.addr.Load()) == a {
		return f, nil
	}
	if e, ok := cn.mt.get(c.ep, a); ok && e.f != nil {
		cn.root.Store(e.f)
		return e.f, nil
	} else if ok {
		return nil, errRestart
	}
	f := c.getFrame()
	if f == nil {
		return nil, errRestart
	}
	f.lockAny(c.ep)
	f.mu.Lock()
	err = x.readNode(c.ep, a, true, f.data)
	f.mu.Unlock()
	if err != nil {
		f.unlock()
		c.putFree(f)
		return nil, err
	}
	f.addr.Store(uint64(a))
	f.rver.Store(f.data.lockWord())
	f.dirty.Store(false)
	f.parent.Store(nil)
	f.state.Store(stateHot)
	cn.mt.set(a, f)
	f.unlock()
	cn.root.Store(f)
	return f, nil
}

// header is what a traversal reads of a frame under its optimistic lock.
type header struct {
	level, count int
	full, covers bool
	low, high    []byte
}

func (c *client) header(f *frame, key []byte) header {
	l := &c.x.l
	f.mu.RLock()
	defer f.mu.RUnlock()
	d := f.data
	return header{
		level: d.level(), count: d.count(), full: l.full(d), covers: l.covers(d, key),
		low: keep(&c.fences[0], l.low(d)), high: keep(&c.fences[1], l.highKey(d)),
	}
}

// keep copies b into *buf, reusing its room, and returns the copy; a nil
// b (an open upper fence) stays nil.
func keep(buf *[]byte, b []byte) []byte {
	if b == nil {
		return nil
	}
	*buf = append((*buf)[:0], b...)
	return *buf
}

// descend is one attempt of find.
func (c *client) descend(key, val []byte, op opKind) (leafRef, *offloadReply, error) {
	x, cn, l := c.x, c.cn, &c.x.l
	parts := x.parts.Load()
	f, err := c.rootFrame()
	if err != nil {
		return leafRef{}, nil, err
	}
	v, ok := f.stable()
	if !ok {
		return leafRef{}, nil, errRestart
	}
	var p *frame
	var pv uint64
	for {
		h := c.header(f, key)
		if f.ver.Load() != v {
			return leafRef{}, nil, errRestart
		}
		if !h.covers {
			return leafRef{}, nil, c.refresh(key)
		}
		shared := parts.shared(h.low, h.high)
		if op == opInsert && h.full {
			switch {
			case p == nil && !shared:
				return leafRef{}, nil, c.splitRoot(f, v)
			case p == nil || shared:
				return leafRef{}, nil, c.refreshSplit(key)
			default:
				return leafRef{}, nil, c.splitChild(p, pv, f, v, key)
			}
		}
		if h.level == 0 {
			cn.hits.Add(1)
			cn.seen.Add(1)
			return leafRef{f: f, v: v, parent: p, pv: pv}, nil, nil
		}
		f.mu.RLock()
		i := l.innerFind(f.data, key)
		ptr := l.child(f.data, i)
		clow, chigh := l.childRange(f.data, i)
		clow, chigh = keep(&c.fences[2], clow), keep(&c.fences[3], chigh)
		f.mu.RUnlock()
		c.ep.Compute(cost.NodeSearch(h.count))
		if f.ver.Load() != v || p != nil && p.ver.Load() != pv {
			return leafRef{}, nil, errRestart
		}
		if ptr&swizzled != 0 {
			ch := cn.frames[ptr&^swizzled]
			cv, ok := ch.stable()
			if !ok || f.ver.Load() != v {
				return leafRef{}, nil, errRestart
			}
			cn.hits.Add(1)
			cn.seen.Add(1)
			p, pv, f, v = f, v, ch, cv
			continue
		}
		a := transport.GAddr(ptr)
		cn.seen.Add(1)
		if e, ok := cn.mt.get(c.ep, a); ok {
			if e.io {
				return leafRef{}, nil, errRestart
			}
			// Cooling (or orphaned by a split): re-heat and re-swizzle.
			c.reheat(f, v, e.f, a)
			return leafRef{}, nil, errRestart
		}
		clevel := h.level - 1
		cshared := parts.shared(clow, chigh)
		if !cn.mt.claim(a) {
			return leafRef{}, nil, errRestart
		}
		var d decision
		if !cshared && !shared && op != opScan {
			d = c.decide(clevel)
		}
		if d.offload {
			rep, err := c.offload(f, a, clevel, op, key, val, d.sample)
			cn.mt.release(a)
			if err != nil {
				return leafRef{}, nil, err
			}
			if rep.status == statusSMO {
				c.noOffload = true
				return leafRef{}, nil, errRestart
			}
			return leafRef{}, rep, nil
		}
		t0 := c.ep.Now()
		nf, ref, err := c.fetch(f, v, a, clevel, cshared, key)
		if err != nil || nf == nil {
			return ref, nil, err
		}
		if d.sample {
			c.fetchLat.add(c.ep.Now() - t0)
		}
		p, pv, f, v = f, v+2, nf, nf.ver.Load()
		if p.ver.Load() != pv {
			return leafRef{}, nil, errRestart
		}
	}
}

// fetch reads the missed node a below parent f (read at version v),
// holding a's I/O flag, and admits it into the cache; a leaf that is not
// admitted (lazy admission, section 5.4) comes back as a temp leafRef
// whose I/O flag the caller releases.
func (c *client) fetch(f *frame, v uint64, a transport.GAddr, level int, shared bool, key []byte) (*frame, leafRef, error) {
	x, cn, l := c.x, c.cn, &c.x.l
	img := make(node, NodeBytes)
	if err := x.readNode(c.ep, a, shared, img); err != nil {
		cn.mt.release(a)
		return nil, leafRef{}, err
	}
	if !l.covers(img, key) {
		cn.mt.release(a)
		return nil, leafRef{}, c.refresh(key)
	}
	admit := level > 0 || c.forceAdmit || c.ep.Rand().Float64() < x.opt.leafAdmit
	var nf *frame
	if admit {
		nf = c.getFrame()
	}
	if nf == nil {
		if level > 0 {
			cn.mt.release(a)
			return nil, leafRef{}, errRestart
		}
		return nil, leafRef{temp: img, addr: a, parent: f, pv: v}, nil
	}
	c.forceAdmit = false
	if !f.lock(c.ep, v) {
		cn.mt.release(a)
		c.putFree(nf)
		return nil, leafRef{}, errRestart
	}
	nf.mu.Lock()
	copy(nf.data, img)
	nf.mu.Unlock()
	nf.addr.Store(uint64(a))
	nf.rver.Store(img.lockWord())
	nf.dirty.Store(false)
	nf.parent.Store(f)
	nf.state.Store(stateHot)
	f.mu.Lock()
	i := l.innerFind(f.data, key)
	if l.child(f.data, i) == uint64(a) {
		l.setChild(f.data, i, swizzled|uint64(nf.id))
	}
	f.mu.Unlock()
	cn.mt.set(a, nf)
	f.unlock()
	return nf, leafRef{}, nil
}

// reheat brings a cooling (or orphaned) frame back under parent f and
// re-swizzles the pointer (section 5.1: a second chance).
func (c *client) reheat(f *frame, v uint64, ch *frame, a transport.GAddr) {
	l := &c.x.l
	if !f.lock(c.ep, v) {
		return
	}
	defer f.unlock()
	ch.lockAny(c.ep)
	defer ch.unlock()
	if transport.GAddr(ch.addr.Load()) != a || ch.state.Load() == stateFree {
		return
	}
	ch.mu.RLock()
	low := bytes.Clone(l.low(ch.data))
	ch.mu.RUnlock()
	f.mu.Lock()
	i := l.innerFind(f.data, low)
	if l.child(f.data, i) == uint64(a) {
		l.setChild(f.data, i, swizzled|uint64(ch.id))
	}
	f.mu.Unlock()
	ch.parent.Store(f)
	ch.gen.Add(1)
	ch.state.Store(stateHot)
}

// own runs fn if this compute node owns key; otherwise it forwards the
// operation to the owner (section 4: each compute node serves its range).
// Without partitioning every compute node serves every key.
func (c *client) own(key []byte, fn func() error, forward func(owner int) error) error {
	for i := 0; ; i++ {
		c.retry(i)
		parts := c.x.parts.Load()
		o := parts.owner(key)
		if c.x.opt.partitioned && o != c.cn.idx {
			err := forward(o)
			if err != errWrongOwner {
				return err
			}
			if c.x.parts.Load() == parts {
				// The owner knows newer partitions than this instance:
				// they were installed in another compute node's.
				if err := c.refreshPartitions(parts); err != nil {
					return err
				}
			}
			continue
		}
		if !c.cn.enter(c.ep, key, parts) {
			continue
		}
		c.begin()
		err := fn()
		c.cn.own.RUnlock()
		return err
	}
}

var _ indexes.Client = (*client)(nil)
