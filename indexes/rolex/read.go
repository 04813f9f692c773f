package rolex

import (
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

// readLeaves READs addrs in one doorbell batch and re-reads, in another,
// every leaf whose lines disagree (a WRITE landed during the READ).
func (c *client) readLeaves(addrs []transport.GAddr) ([]*leaf, error) {
	g := c.g
	out := make([]*leaf, len(addrs))
	slab := make([]leaf, len(addrs))
	kvs := make([]byte, len(addrs)*g.span*g.kvBytes())
	bufs := make([]byte, len(addrs)*g.wire)
	todo := make([]int, len(addrs))
	for i := range todo {
		todo[i] = i
	}
	for len(todo) > 0 {
		ops := make([]transport.Op, len(todo))
		for j, i := range todo {
			ops[j] = transport.ReadOp(bufs[i*g.wire:(i+1)*g.wire], addrs[i])
		}
		if err := c.ep.Post(ops...); err != nil {
			return nil, fmt.Errorf("reading %d leaves: %w", len(ops), err)
		}
		c.ep.Compute(cost.Copy(len(todo) * g.wire))
		var again []int
		for _, i := range todo {
			l := &slab[i]
			l.kv = kvs[i*g.span*g.kvBytes() : (i+1)*g.span*g.kvBytes()]
			if !g.decode(bufs[i*g.wire:(i+1)*g.wire], c.scratch, l) {
				again = append(again, i)
				continue
			}
			out[i] = l
		}
		todo = again
	}
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
			known[i-lo] = c.st.chain(i)
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
	for i, gr := range groups {
		switch {
		case chains && !slices.Equal(gr.addrs[1:], known[i]):
			c.st.setChain(gr.idx, slices.Clone(gr.addrs[1:]))
		case !chains && gr.leaves[0].next != 0 && c.st.chain(gr.idx) == nil:
			c.st.setChain(gr.idx, []transport.GAddr{gr.leaves[0].next})
		}
	}
	return groups, nil
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

// Search reads the leaves the model predicts for key and their synonym
// leaves in one doorbell batch.
func (c *client) Search(key []byte) ([]byte, bool, error) {
	m, err := c.model()
	if err != nil {
		return nil, false, err
	}
	c.ep.Compute(cost.NodeSearch(len(m.segs)))
	l, r := m.leafRange(key)
	groups, err := c.readGroups(m, l, r, true)
	if err != nil {
		return nil, false, err
	}
	gi, li, ei, ok := c.lookup(groups, key)
	if !ok {
		return nil, false, nil
	}
	return slices.Clone(c.g.val(groups[gi].leaves[li], ei)), true, nil
}
