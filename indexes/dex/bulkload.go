package dex

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"iter"

	"github.com/dmbench/dmbench/transport"
)

// bulkFill is the fraction of each node's capacity a bulk load fills, so
// that the first inserts do not split every leaf.
const bulkFill = 0.8

// BulkLoad builds the tree bottom-up from kvs (increasing keys) with
// direct writes. Leaves break at partition boundaries so that every leaf
// is owned by one compute node, and each subtree rooted at level M is
// placed on one memory node (section 3). It replaces the initial tree.
func (x *Index) BulkLoad(ep transport.Endpoint, kvs iter.Seq2[[]byte, []byte]) error {
	if x.env.Attach {
		return fmt.Errorf("dex: bulk load through an instance attached to a tree another compute node built: that one loads it")
	}
	if err := x.build(ep, kvs); err != nil {
		return fmt.Errorf("dex: bulk load: %w", err)
	}
	for _, c := range x.cn {
		if c != nil {
			c.reset()
		}
	}
	return nil
}

func (x *Index) buildEmpty(ep transport.Endpoint) error {
	return x.build(ep, func(func([]byte, []byte) bool) {})
}

// levelBuild is the node being filled at one level.
type levelBuild struct {
	img  node
	addr transport.GAddr
	n    int // nodes started at this level
}

type builder struct {
	x      *Index
	ep     transport.Endpoint
	levels []*levelBuild
	fill   [2]int // entries per leaf, per inner node
}

// bulkFills are the entries a bulk load puts in a leaf and in an inner
// node.
func bulkFills(l *layout) (leaf, inner int) {
	return max(2, int(float64(l.leafCap)*bulkFill)), max(2, int(float64(l.innerCap)*bulkFill))
}

func (x *Index) build(ep transport.Endpoint, kvs iter.Seq2[[]byte, []byte]) error {
	l := &x.l
	b := &builder{x: x, ep: ep}
	b.fill[0], b.fill[1] = bulkFills(l)
	parts := x.parts.Load()
	zero := make([]byte, l.ks)
	if err := b.start(0, zero); err != nil {
		return err
	}
	cur := 0
	advance := func(to int) error {
		for ; cur < to; cur++ {
			bound := parts.lows[cur+1]
			if err := b.finish(0, bound); err != nil {
				return err
			}
			if err := b.start(0, bound); err != nil {
				return err
			}
		}
		return nil
	}
	var prev []byte
	for k, v := range kvs {
		if len(k) != l.ks || len(v) != l.vs {
			return fmt.Errorf("entry of %d+%d bytes, want %d+%d", len(k), len(v), l.ks, l.vs)
		}
		if prev != nil && bytes.Compare(prev, k) >= 0 {
			return fmt.Errorf("keys not increasing at %x", k)
		}
		prev = append(prev[:0], k...)
		if err := advance(parts.index(k)); err != nil {
			return err
		}
		lb := b.levels[0]
		if lb.img.count() >= b.fill[0] {
			if err := b.finish(0, k); err != nil {
				return err
			}
			if err := b.start(0, k); err != nil {
				return err
			}
			lb = b.levels[0]
		}
		l.leafInsertAt(lb.img, lb.img.count(), k, v)
	}
	if err := advance(len(parts.lows) - 1); err != nil {
		return err
	}
	// Close every level bottom-up; the single node of the top level is the
	// root.
	for lv := 0; ; lv++ {
		lb := b.levels[lv]
		if lv == len(b.levels)-1 && lb.n == 1 {
			if err := b.write(lv, nil); err != nil {
				return err
			}
			var w [8]byte
			binary.LittleEndian.PutUint64(w[:], uint64(lb.addr))
			return ep.Write(x.rootPtr, w[:])
		}
		if err := b.finish(lv, nil); err != nil {
			return err
		}
	}
}

// memFor places node k of level lv: nodes at levels <= M go to the memory
// node of their level-M ancestor (children are assigned to parents in
// order, fill[1] each), higher nodes round-robin.
func (b *builder) memFor(lv, k int) transport.NodeID {
	mems := b.x.mems
	if lv > b.x.opt.m {
		return mems[k%len(mems)]
	}
	g := k
	for range b.x.opt.m - lv {
		g /= b.fill[1]
	}
	return mems[g%len(mems)]
}

// start begins a new node at level lv with low fence low.
func (b *builder) start(lv int, low []byte) error {
	if lv == len(b.levels) {
		b.levels = append(b.levels, &levelBuild{})
	}
	lb := b.levels[lv]
	a, err := b.x.alloc(b.ep, b.memFor(lv, lb.n))
	if err != nil {
		return err
	}
	lb.n++
	lb.addr = a
	lb.img = make(node, NodeBytes)
	lb.img.setLevel(lv)
	lb.img.setSelf(uint64(a))
	b.x.l.setFences(lb.img, low, nil)
	return nil
}

// write sets the high fence of level lv's node and writes it.
func (b *builder) write(lv int, high []byte) error {
	lb := b.levels[lv]
	b.x.l.setFences(lb.img, b.x.l.low(lb.img), high)
	return b.ep.Write(lb.addr, lb.img)
}

// finish writes level lv's node with high fence high and adds it to its
// parent.
func (b *builder) finish(lv int, high []byte) error {
	lb := b.levels[lv]
	low := bytes.Clone(b.x.l.low(lb.img))
	addr := lb.addr
	if err := b.write(lv, high); err != nil {
		return err
	}
	if lv+1 == len(b.levels) {
		if err := b.start(lv+1, low); err != nil {
			return err
		}
	}
	pb := b.levels[lv+1]
	if pb.img.count() >= b.fill[1] {
		if err := b.finish(lv+1, low); err != nil {
			return err
		}
		if err := b.start(lv+1, low); err != nil {
			return err
		}
	}
	b.x.l.innerInsertAt(pb.img, pb.img.count(), low, uint64(addr))
	return nil
}
