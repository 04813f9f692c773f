package dex

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

// RPC methods.
const (
	methodOffload uint16 = 0x4458 // "DX": a pushed-down operation
	methodForward uint16 = 0x4459 // an operation for another partition's owner
	methodAdopt   uint16 = 0x445a // a repartitioning hands a key range to its new owner
)

// Offload statuses.
const (
	statusOK byte = iota
	statusNotFound
	statusSMO // the operation needs a structural modification: fall back
)

// Section 6.1's rule as the artifact applies it (baotonglu/dex
// include/cache/latency_collector.h, LatencyCollector): avgWindow is the
// moving averages' window (total_num_), sampleRate the probability that a
// decision taken on full windows samples its latency, and contrary the
// probability of taking the contrary decision, which is always sampled.
const (
	avgWindow  = 50
	sampleRate = 0.01
	contrary   = 0.01
)

// movingAvg is the mean of the last avgWindow samples.
type movingAvg struct {
	s   [avgWindow]int64
	n   int
	sum int64
}

func (m *movingAvg) add(x int64) {
	i := m.n % avgWindow
	if m.n >= avgWindow {
		m.sum -= m.s[i]
	}
	m.s[i] = x
	m.sum += x
	m.n++
}

// full reports whether the window holds avgWindow samples.
func (m *movingAvg) full() bool { return m.n >= avgWindow }

func (m *movingAvg) mean() float64 {
	if m.n == 0 {
		return 0
	}
	return float64(m.sum) / float64(min(m.n, avgWindow))
}

// decision is what a thread does at a missed node: offload the rest of
// the operation or fetch the node, and whether the latency of what it
// does is a sample of its moving average.
type decision struct {
	offload, sample bool
}

// decide takes the offloading decision at a miss of an owned node at
// level lv whose parent is owned. With offload=cost it follows the
// artifact (CacheManager::cold_to_hot_with_rpc in
// include/cache/leanstore_cache.h and the callers in
// include/tree/leanstore_tree.h):
//
//   - Only inner nodes at levels 1 to M are decided on; a missed leaf is
//     fetched, subject to admission (section 5.4).
//   - A thread's first avgWindow decisions fetch and its next avgWindow
//     offload, every one sampled, to fill both windows; from then on a
//     decision is sampled with probability sampleRate and offloads when
//     l_p < (lv+1)(l_o + l_s)c, l_o being the sampled fetch latency and
//     l_s a node search (the artifact's 40 ns), and with probability
//     contrary takes the other way.
//   - The RPC is sent only once the cache has handed out every page (the
//     artifact's dynamic phase); before that an offloading decision
//     fetches instead, sampled into the fetch average.
//
// offload=always offloads every miss at a level <= M, leaves included:
// section 6's Offload-only variant, whose cache holds the levels above M.
func (c *client) decide(lv int) decision {
	o := &c.x.opt
	switch {
	case c.noOffload || o.offload == "off":
		return decision{}
	case o.offload == "always":
		return decision{offload: lv <= o.m}
	case lv < 1 || lv > o.m:
		return decision{}
	}
	var d decision
	switch {
	case !c.fetchLat.full():
		d.sample = true
	case !c.rpcLat.full():
		d.offload, d.sample = true, true
	default:
		d.sample = c.ep.Rand().Float64() < sampleRate
		ls := float64(cost.NodeSearch(c.x.l.innerCap))
		d.offload = c.rpcLat.mean() < float64(lv+1)*(c.fetchLat.mean()+ls)*o.coefficient
		if c.ep.Rand().Float64() < contrary {
			d.offload, d.sample = !d.offload, true
		}
	}
	if d.offload && !c.cn.dynamic() {
		d.offload = false
	}
	return d
}

// offloadReply is a memory node's answer.
type offloadReply struct {
	status   byte
	found    bool
	val      []byte
	modified transport.GAddr // the leaf it changed, 0 when none
}

// offload pushes the rest of op down to the memory node holding the
// subtree at a (section 6.2). The caller holds a's I/O flag; the parent p
// is pinned against cooling for the duration, and a cached copy of the
// leaf the memory node changed is invalidated afterwards. sample adds the
// RPC's latency to the moving average.
func (c *client) offload(p *frame, a transport.GAddr, lv int, op opKind, key, val []byte, sample bool) (*offloadReply, error) {
	p.pins.Add(1)
	defer p.pins.Add(-1)
	req := make([]byte, 0, 10+len(key)+len(val))
	req = append(req, byte(op), byte(lv))
	req = binary.LittleEndian.AppendUint64(req, uint64(a))
	req = append(req, key...)
	req = append(req, val...)
	t0 := c.ep.Now()
	raw, err := c.ep.Call(a.Node(), methodOffload, req)
	if err != nil {
		return nil, fmt.Errorf("dex: offload: %w", err)
	}
	if sample {
		c.rpcLat.add(c.ep.Now() - t0)
	}
	rep := &offloadReply{status: raw[0], found: raw[1] == 1}
	rep.modified = transport.GAddr(binary.LittleEndian.Uint64(raw[2:]))
	if len(raw) > 10 {
		rep.val = bytes.Clone(raw[10:])
	}
	if rep.modified != 0 {
		c.invalidate(rep.modified)
	}
	return rep, nil
}

// invalidate drops a cached copy of a node the memory node changed.
func (c *client) invalidate(a transport.GAddr) {
	cn := c.cn
	e, ok := cn.mt.get(c.ep, a)
	if !ok || e.f == nil {
		return
	}
	f := e.f
	f.lockAny(c.ep)
	defer f.unlock()
	if transport.GAddr(f.addr.Load()) != a || f.state.Load() == stateFree {
		return
	}
	cn.mt.drop(a, f)
	c.release(f)
	c.putFree(f)
}

// offloadHandlers is the pushdown handler alone, for a memory node in a
// process of its own (indexes.Spec.Offload): it needs nothing of the
// index but the node layout, which the key and value sizes fix.
func offloadHandlers(s indexes.Shape, _ indexes.Params) (map[uint16]transport.Handler, error) {
	x := &Index{l: newLayout(s.KeySize, s.ValueSize)}
	return map[uint16]transport.Handler{methodOffload: x.serveOffloadReq}, nil
}

// serveOffload registers the pushdown handler on every memory node.
func (x *Index) serveOffload() {
	for _, n := range x.mems {
		x.env.Fabric.Handle(n, methodOffload, x.serveOffloadReq)
	}
}

// offloadImages recycles the node images serveOffloadReq walks with: one
// a request was a page to allocate and clear. Every READ fills the whole
// image, so what a recycled one held never shows.
var offloadImages = sync.Pool{New: func() any {
	n := make(node, NodeBytes)
	return &n
}}

// serveOffloadReq walks the subtree below the missed node in the memory
// node's own memory (local accesses, charged to its core) and applies the
// operation at the leaf, unless it would split the leaf.
func (x *Index) serveOffloadReq(ep transport.Endpoint, req []byte) ([]byte, error) {
	l := &x.l
	if len(req) < 10+l.ks {
		return nil, fmt.Errorf("offload request of %d bytes", len(req))
	}
	op, a := opKind(req[0]), transport.GAddr(binary.LittleEndian.Uint64(req[2:]))
	key := req[10 : 10+l.ks]
	val := req[10+l.ks:]
	reply := func(st byte, found bool, mod transport.GAddr, v []byte) []byte {
		out := make([]byte, 10, 10+len(v))
		out[0] = st
		if found {
			out[1] = 1
		}
		binary.LittleEndian.PutUint64(out[2:], uint64(mod))
		return append(out, v...)
	}
	img := offloadImages.Get().(*node)
	defer offloadImages.Put(img)
	n := *img
	for {
		if a.Node() != ep.Node() {
			return reply(statusSMO, false, 0, nil), nil
		}
		if err := ep.Read(n, a); err != nil {
			return nil, err
		}
		ep.Compute(cost.Copy(NodeBytes) + cost.NodeSearch(n.count()))
		if n.level() == 0 {
			break
		}
		a = transport.GAddr(l.child(n, l.innerFind(n, key)))
	}
	i, ok := l.leafFind(n, key)
	switch op {
	case opSearch:
		if !ok {
			return reply(statusNotFound, false, 0, nil), nil
		}
		return reply(statusOK, true, 0, l.leafVal(n, i)), nil
	case opUpdate, opDelete:
		if !ok {
			return reply(statusNotFound, false, 0, nil), nil
		}
		if op == opUpdate {
			copy(l.leafVal(n, i), val)
		} else {
			l.leafRemoveAt(n, i)
		}
	case opInsert:
		if ok {
			copy(l.leafVal(n, i), val)
		} else if l.full(n) {
			return reply(statusSMO, false, 0, nil), nil
		} else {
			l.leafInsertAt(n, i, key, val)
		}
	}
	if err := ep.Write(a.Add(8), n[8:]); err != nil {
		return nil, err
	}
	return reply(statusOK, true, a, nil), nil
}
