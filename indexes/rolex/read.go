package rolex

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// group is leaf idx and its synonym leaves as read, in chain order.
type group struct {
	idx    int
	addrs  []transport.GAddr
	leaves []*leaf
}

// leafBufs is the memory a client reads leaves into, reused from one
// operation to the next: the warm-up searches every record from every
// compute node, and allocating each search's leaves afresh, then
// collecting them, was most of the sixth of the simulator's time that
// went to allocation and garbage collection. What take hands out stays
// valid until reset, which an operation calls first; nothing read into
// it outlives the operation (results and cached keys are copies).
type leafBufs struct {
	wire   []byte
	kv     []byte
	leaves []leaf
	ptrs   []*leaf
	idx    []int
	ops    []transport.Op
}

func (b *leafBufs) reset() {
	b.wire, b.kv, b.leaves, b.ptrs = b.wire[:0], b.kv[:0], b.leaves[:0], b.ptrs[:0]
}

// take returns n elements from the end of *buf, moving to a larger
// backing array when it is full: the one before stays with the slices
// already taken from it.
func take[T any](buf *[]T, n int) []T {
	l := len(*buf)
	if l+n > cap(*buf) {
		*buf, l = make([]T, 0, max(2*cap(*buf), n)), 0
	}
	*buf = (*buf)[:l+n]
	return (*buf)[l : l+n : l+n]
}

// readLeaves READs addrs in one doorbell batch and re-reads, in another,
// every leaf whose lines disagree (a WRITE landed during the READ).
func (c *client) readLeaves(addrs []transport.GAddr) ([]*leaf, error) {
	g, b := c.g, &c.bufs
	kvBytes := g.span * g.kvBytes()
	out := take(&b.ptrs, len(addrs))
	slab := take(&b.leaves, len(addrs))
	kvs := take(&b.kv, len(addrs)*kvBytes)
	bufs := take(&b.wire, len(addrs)*g.wire)
	pending := b.idx[:0]
	for i := range addrs {
		pending = append(pending, i)
	}
	for len(pending) > 0 {
		ops := b.ops[:0]
		for _, i := range pending {
			ops = append(ops, transport.ReadOp(bufs[i*g.wire:(i+1)*g.wire], addrs[i]))
		}
		b.ops = ops
		if err := c.ep.Post(ops...); err != nil {
			return nil, fmt.Errorf("reading %d leaves: %w", len(ops), err)
		}
		c.ep.Compute(cost.Copy(len(pending) * g.wire))
		// The leaves to re-read go to the front of pending, behind the
		// loop's reading position.
		again := pending[:0]
		for _, i := range pending {
			l := &slab[i]
			l.kv = kvs[i*kvBytes : (i+1)*kvBytes : (i+1)*kvBytes]
			if !g.decode(bufs[i*g.wire:(i+1)*g.wire], c.scratch, l) {
				again = append(again, i)
				continue
			}
			out[i] = l
		}
		pending = again
	}
	b.idx = pending
	return out, nil
}

// maxChain bounds a synonym chain walk: a longer one means a cycle, which
// the write protocol never creates.
const maxChain = 1 << 20

// readGroups reads leaves lo..hi in one doorbell batch with, when chains
// is set, the synonym leaves this node knows of; synonym pointers it did
// not know cost one more batch per step along a chain. Without chains
// only the leaves themselves are read (an insert's first READ), and their
// pointers only seed the node's synonym cache.
func (c *client) readGroups(m *model, lo, hi int, chains bool) ([]group, error) {
	var addrs []transport.GAddr
	for i := lo; i <= hi; i++ {
		addrs = append(addrs, m.addr(i, c.g.stride))
	}
	known := make([][]transport.GAddr, hi-lo+1)
	if chains {
		for i := lo; i <= hi; i++ {
			known[i-lo] = c.st.chain(i).addrs
			addrs = append(addrs, known[i-lo]...)
		}
	}
	leaves, err := c.readLeaves(addrs)
	if err != nil {
		return nil, err
	}
	got := make(map[transport.GAddr]*leaf, len(addrs))
	for i, a := range addrs {
		got[a] = leaves[i]
	}
	groups := make([]group, hi-lo+1)
	for {
		var missing []transport.GAddr
		for i := range groups {
			gr := group{idx: lo + i}
			a := m.addr(lo+i, c.g.stride)
			for a != 0 {
				l := got[a]
				if l == nil {
					missing = append(missing, a)
					break
				}
				if len(gr.addrs) == maxChain {
					return nil, fmt.Errorf("synonym chain of leaf %d longer than %d", lo+i, maxChain)
				}
				gr.addrs, gr.leaves = append(gr.addrs, a), append(gr.leaves, l)
				if !chains {
					break
				}
				a = l.next
			}
			groups[i] = gr
		}
		if len(missing) == 0 {
			break
		}
		more, err := c.readLeaves(missing)
		if err != nil {
			return nil, err
		}
		for i, a := range missing {
			got[a] = more[i]
		}
	}
	for _, gr := range groups {
		switch {
		case chains:
			c.st.setChain(gr.idx, c.chainOf(gr))
		case gr.leaves[0].next != 0 && c.st.chain(gr.idx).addrs == nil:
			c.st.setChain(gr.idx, chainInfo{addrs: []transport.GAddr{gr.leaves[0].next}})
		}
	}
	return groups, nil
}

// chainOf is the chain information of a group read whole.
func (c *client) chainOf(gr group) chainInfo {
	ci := chainInfo{addrs: slices.Clone(gr.addrs[1:]), firsts: make([][]byte, len(gr.leaves))}
	for i, l := range gr.leaves {
		if l.n > 0 {
			ci.firsts[i] = slices.Clone(c.g.key(l, 0))
		}
	}
	return ci
}

// lookup finds key in the groups: the group index, the leaf's position in
// its chain and the entry, or ok false.
func (c *client) lookup(groups []group, key []byte) (gi, li, ei int, ok bool) {
	for gi, gr := range groups {
		for li, l := range gr.leaves {
			c.ep.Compute(cost.NodeSearch(l.n))
			if ei, ok := c.g.find(l, key); ok {
				return gi, li, ei, true
			}
		}
	}
	return 0, 0, 0, false
}

// search reads the leaves the model predicts for key, with the synonym
// leaves of key's own leaf, in one doorbell batch.
func (c *client) search(key []byte) ([]byte, bool, error) {
	c.bufs.reset()
	m, err := c.model()
	if err != nil {
		return nil, false, err
	}
	_, lf, ei, ok, err := c.locate(m, key)
	if err != nil || !ok {
		return nil, false, err
	}
	return slices.Clone(c.g.val(lf, ei)), true, nil
}

// locate finds key: one doorbell batch READs the leaves the model
// predicts (the port's search) and, of the synonym chain of key's leaf t
// (the leaf the fences route key to, which keys never leave), the leaf
// the cached first keys place key in and the one after it, which must
// confirm that placement: a chain's leaves hold ascending key ranges, and
// a split that moved key on changed the leaf's synonym pointer. Without
// cached first keys, or when the check fails, it walks t's whole chain.
// It returns the leaf holding key, its address and key's entry.
func (c *client) locate(m *model, key []byte) (transport.GAddr, *leaf, int, bool, error) {
	c.ep.Compute(cost.NodeSearch(len(m.segs)) + cost.NodeSearch(m.leaves))
	l, r := m.leafRange(key)
	t := m.targetNear(key, l, r)
	l, r = min(l, t), max(r, t)
	addrs := c.addrs[:0]
	for i := l; i <= r; i++ {
		addrs = append(addrs, m.addr(i, c.g.stride))
	}
	known := c.st.chain(t)
	all := append(append(c.chain[:0], m.addr(t, c.g.stride)), known.addrs...)
	pos, cached := 0, known.firsts != nil && len(known.firsts) == len(all)
	if cached {
		pos = known.place(key)
		for _, i := range []int{pos, pos + 1} {
			if i > 0 && i < len(all) {
				addrs = append(addrs, all[i])
			}
		}
	}
	c.addrs, c.chain = addrs, all
	c.comb.CutRead()
	leaves, err := c.readLeaves(addrs)
	if err != nil {
		return 0, nil, 0, false, err
	}
	if cached {
		got := func(a transport.GAddr) *leaf {
			if i := slices.Index(addrs, a); i >= 0 {
				return leaves[i]
			}
			return nil
		}
		lf := got(all[pos])
		ok := pos == 0 || lf.n > 0 && bytes.Compare(c.g.key(lf, 0), key) <= 0
		if pos+1 < len(all) {
			nx := got(all[pos+1])
			ok = ok && lf.next == all[pos+1] && nx.n > 0 && bytes.Compare(c.g.key(nx, 0), key) > 0
		} else {
			ok = ok && lf.next == 0
		}
		if ok {
			c.ep.Compute(cost.NodeSearch(lf.n))
			ei, found := c.g.find(lf, key)
			return all[pos], lf, ei, found, nil
		}
	}
	if p := leaves[t-l]; !cached && p.next == 0 {
		// A leaf without synonym leaves, as the READ shows.
		c.st.setChain(t, c.chainOf(group{addrs: all[:1], leaves: []*leaf{p}}))
		c.ep.Compute(cost.NodeSearch(p.n))
		ei, found := c.g.find(p, key)
		return all[0], p, ei, found, nil
	}
	groups, err := c.readGroups(m, t, t, true)
	if err != nil {
		return 0, nil, 0, false, err
	}
	_, li, ei, found := c.lookup(groups, key)
	if !found {
		return 0, nil, 0, false, nil
	}
	return groups[0].addrs[li], groups[0].leaves[li], ei, true, nil
}
