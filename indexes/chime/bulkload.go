package chime

import (
	"bytes"
	"fmt"
	"iter"

	"github.com/dmbench/dmbench/transport"
)

// Bulk-load fill factors: leaves take three quarters of their span, the
// load at which hopscotch placement with a neighbourhood of 8 still
// succeeds almost always and inserts find room without splitting at once;
// internal nodes take three quarters of theirs, as B+-tree bulk loads do.
const (
	leafFillNum, leafFillDen   = 3, 4
	innerFillNum, innerFillDen = 3, 4
)

// init writes the empty tree: one empty leaf under a root at level 1.
func (x *Chime) init(ep transport.Endpoint) error {
	c := x.NewClient(ep).(*client)
	leaf, err := c.alloc.Alloc(ep, uint64(x.g.leafBytes), lineBytes)
	if err != nil {
		return err
	}
	buf, _, _ := x.g.buildLeaf(leafSpec{lowInf: true, meta: rightMeta{infinite: true}}, x.g.home)
	if err := ep.Write(leaf, buf); err != nil {
		return err
	}
	x.leaves.Add(1)
	return c.buildInner([]child{{lowInf: true, addr: leaf}}, 1)
}

// child is a node of the level being built, with its low fence.
type child struct {
	lowInf bool
	low    []byte
	addr   transport.GAddr
}

// BulkLoad lays out kvs (in increasing key order) as fresh leaves filled
// to three quarters, builds the internal levels over them bottom-up and
// swings the root pointer to the new root.
func (x *Chime) BulkLoad(ep transport.Endpoint, kvs iter.Seq2[[]byte, []byte]) error {
	c := x.NewClient(ep).(*client)
	g := &x.g
	fill := max(1, g.span*leafFillNum/leafFillDen)
	var (
		leaves  []child
		pending = g.emptyLeaf(0)
		count   int
		cur     = child{lowInf: true}
		addr    transport.GAddr
		prev    []byte
	)
	// flush writes the pending leaf with high fence high and the next
	// leaf (already allocated) as its sibling.
	flush := func(high []byte, next transport.GAddr) error {
		meta := rightMeta{infinite: high == nil, high: high, sibling: next}
		buf, _ := g.render(pending, leafSpec{lowInf: cur.lowInf, low: cur.low, meta: meta})
		if err := ep.Write(addr, buf); err != nil {
			return fmt.Errorf("bulk load: writing leaf %v: %w", addr, err)
		}
		x.leaves.Add(1)
		cur.addr = addr
		leaves = append(leaves, cur)
		return nil
	}
	for k, v := range kvs {
		if prev != nil && bytes.Compare(prev, k) >= 0 {
			return fmt.Errorf("bulk load: keys not in increasing order at %x", k)
		}
		prev = bytes.Clone(k)
		e := entry{key: bytes.Clone(k), val: bytes.Clone(v)}
		if addr == 0 {
			a, err := c.alloc.Alloc(ep, uint64(g.leafBytes), lineBytes)
			if err != nil {
				return fmt.Errorf("bulk load: %w", err)
			}
			addr = a
		}
		if count == fill || !pending.insert(e.key, e.val, g.home(e.key), g.home) {
			next, err := c.alloc.Alloc(ep, uint64(g.leafBytes), lineBytes)
			if err != nil {
				return fmt.Errorf("bulk load: %w", err)
			}
			if err := flush(e.key, next); err != nil {
				return err
			}
			pending, addr, cur, count = g.emptyLeaf(0), next, child{low: e.key}, 0
			if !pending.insert(e.key, e.val, g.home(e.key), g.home) {
				return fmt.Errorf("bulk load: key %x finds no slot in an empty leaf", e.key)
			}
		}
		count++
	}
	if addr == 0 {
		return nil
	}
	if err := flush(nil, 0); err != nil {
		return err
	}
	return c.buildInner(leaves, 1)
}

// buildInner builds the internal levels over children (one level of
// nodes, lowest first) from level up and points the root word at the top.
func (c *client) buildInner(children []child, level int) error {
	x := c.x
	ig := x.ig
	per := max(2, ig.span*innerFillNum/innerFillDen+1) // children per node
	for {
		var parents []child
		var nodes []*inner
		for i := 0; i < len(children); i += per {
			group := children[i:min(i+per, len(children))]
			a, err := c.alloc.Alloc(c.ep, uint64(ig.bytes), lineBytes)
			if err != nil {
				return fmt.Errorf("building level %d: %w", level, err)
			}
			n := &inner{
				addr: a, level: level, lowInf: group[0].lowInf, low: fence(group[0].low, ig.keySize),
				high: make([]byte, ig.keySize), highInf: true, leftmost: group[0].addr,
			}
			for _, ch := range group[1:] {
				n.keys = append(n.keys, ch.low)
				n.children = append(n.children, ch.addr)
			}
			if len(nodes) > 0 {
				prev := nodes[len(nodes)-1]
				prev.high, prev.highInf, prev.sibling = n.low, false, a
			}
			nodes = append(nodes, n)
			parents = append(parents, child{lowInf: n.lowInf, low: n.low, addr: a})
		}
		for _, n := range nodes {
			b, err := ig.encode(n)
			if err != nil {
				return err
			}
			if err := c.ep.Write(n.addr, b); err != nil {
				return fmt.Errorf("building level %d: %w", level, err)
			}
			x.inners.Add(1)
		}
		if len(nodes) == 1 {
			var w [8]byte
			putWord(w[:], uint64(nodes[0].addr))
			return c.ep.Write(x.root, w[:])
		}
		children, level = parents, level+1
	}
}

// fence returns a key-sized fence, zero for -inf.
func fence(k []byte, size int) []byte {
	if k == nil {
		return make([]byte, size)
	}
	return k
}
