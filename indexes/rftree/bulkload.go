package rftree

import (
	"bytes"
	"fmt"
	"iter"
	"sync/atomic"

	"github.com/dmbench/dmbench/transport"
)

// BulkLoad builds the tree bottom-up from kvs (strictly increasing keys)
// through a setup endpoint, outside simulated time: data nodes filled to
// bulk_fill of their capacity and linked by sibling pointers, placed on
// the memory nodes in turn; then each internal level, appended to the
// search layer's chunks; then the root word. The paper loads by inserts
// (Load A); the workloads that start from a loaded tree get the same kind
// of tree at a chosen fill. Every compute node's SLC is dropped, so the
// first operation on each reads the search layer.
func (x *Index) BulkLoad(ep transport.Endpoint, kvs iter.Seq2[[]byte, []byte]) error {
	l := &x.l
	b := bulk{x: x, ep: ep, img: make([]byte, l.nodeBytes)}
	b.chunk.Store(-1)
	perLeaf := clampFill(x.fill, l.leafCard)
	var prev []byte
	for k, v := range kvs {
		if len(k) != l.keySize || len(v) != l.valSize {
			return fmt.Errorf("rftree: bulk load: key of %d bytes and value of %d, want %d and %d", len(k), len(v), l.keySize, l.valSize)
		}
		if prev != nil && bytes.Compare(prev, k) >= 0 {
			return fmt.Errorf("rftree: bulk load: keys not increasing at %x after %x", k, prev)
		}
		var err error
		switch {
		case prev == nil:
			err = b.start(make([]byte, l.keySize))
		case count(b.img) == perLeaf:
			err = b.next(k)
		}
		if err != nil {
			return err
		}
		n := count(b.img)
		copy(l.leafKey(b.img, n), k)
		copy(l.leafVal(b.img, n), v)
		setCount(b.img, n+1)
		prev = append(prev[:0], k...)
	}
	if prev == nil {
		return nil
	}
	if err := b.write(b.addr, b.img); err != nil {
		return err
	}
	root, lvl, err := b.upper()
	if err != nil {
		return err
	}
	var w [8]byte
	putWord(w[:], rootWord(root, lvl))
	if err := ep.Write(x.rootPtr, w[:]); err != nil {
		return fmt.Errorf("rftree: bulk load: writing the root word: %w", err)
	}
	for _, cn := range x.cns {
		cn.slc.Store(nil)
	}
	return nil
}

// clampFill is how many of card slots a bulk-loaded node fills: at least
// one, and never all, since a full node splits.
func clampFill(fill float64, card int) int {
	return min(max(int(fill*float64(card)), 1), card-1)
}

// bulk builds one level at a time: a node is written once the address of
// its right sibling is known.
type bulk struct {
	x     *Index
	ep    transport.Endpoint
	img   []byte
	addr  transport.GAddr
	kids  []child
	chunk atomic.Int64
}

// child is a node of the level below: its low fence and address.
type child struct {
	low  []byte
	addr transport.GAddr
}

func (b *bulk) start(low []byte) error {
	a, err := b.x.setup.Alloc(b.ep, uint64(b.x.l.nodeBytes), nodeAlign)
	if err != nil {
		return fmt.Errorf("rftree: bulk load: %w", err)
	}
	b.x.dataBytes.Add(uint64(b.x.l.nodeBytes))
	b.x.l.initNode(b.img, 0, low, nil, 0, 0)
	b.addr = a
	b.kids = append(b.kids, child{low: bytes.Clone(low), addr: a})
	return nil
}

func (b *bulk) next(low []byte) error {
	prev, img := b.addr, bytes.Clone(b.img)
	if err := b.start(low); err != nil {
		return err
	}
	b.x.l.setHigh(img, low)
	setSibling(img, b.addr)
	return b.write(prev, img)
}

func (b *bulk) write(a transport.GAddr, img []byte) error {
	b.x.l.seal(img)
	if err := b.ep.Write(a, img); err != nil {
		return fmt.Errorf("rftree: bulk load: writing node %v: %w", a, err)
	}
	return nil
}

// upper builds the internal levels over b.kids in the search layer and
// returns the root and its level.
func (b *bulk) upper() (transport.GAddr, int, error) {
	x, l := b.x, &b.x.l
	kids := b.kids
	per := clampFill(x.fill, l.innerCard) + 1 // children per node
	for lvl := 1; ; lvl++ {
		if len(kids) == 1 {
			return kids[0].addr, lvl - 1, nil
		}
		if lvl >= maxLevels {
			return 0, 0, fmt.Errorf("rftree: bulk load: tree taller than %d levels", maxLevels)
		}
		addrs := make([]transport.GAddr, (len(kids)+per-1)/per)
		for i := range addrs {
			a, err := x.allocInternal(b.ep, x.setup, &b.chunk, func() {})
			if err != nil {
				return 0, 0, fmt.Errorf("rftree: bulk load: %w", err)
			}
			addrs[i] = a
		}
		var up []child
		img := make([]byte, l.nodeBytes)
		for i, a := range addrs {
			group := kids[i*per : min((i+1)*per, len(kids))]
			var high []byte
			var sib transport.GAddr
			if i+1 < len(addrs) {
				high, sib = kids[(i+1)*per].low, addrs[i+1]
			}
			l.initNode(img, lvl, group[0].low, high, sib, 0)
			l.setInnerChild(img, 0, group[0].addr)
			for _, g := range group[1:] {
				l.innerInsert(img, g.low, g.addr)
			}
			if err := b.write(a, img); err != nil {
				return 0, 0, err
			}
			up = append(up, child{low: group[0].low, addr: a})
		}
		kids = up
	}
}
