package sherman

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"iter"

	"github.com/dmbench/dmbench/transport"
)

// BulkLoad builds the tree bottom-up from kvs (strictly increasing keys)
// through a setup endpoint: leaves filled to bulk_fill of their capacity
// and linked by sibling pointers, then each internal level over the one
// below, then the root pointer, which replaces the empty root New made.
// Sherman has no bulk load (DEX fills it by inserts); this writes the same
// kind of tree at a chosen fill, outside simulated time. In P-Sherman a
// leaf never spans a partition bound, so every leaf belongs to one
// compute node.
func (x *Index) BulkLoad(ep transport.Endpoint, kvs iter.Seq2[[]byte, []byte]) error {
	l := &x.l
	b := bulk{x: x, ep: ep, img: make([]byte, l.leafBytes)}
	perLeaf := clampFill(x.fill, l.leafCard)
	var prev []byte
	for k, v := range kvs {
		if len(k) != l.keySize || len(v) != l.valSize {
			return fmt.Errorf("sherman: bulk load: key of %d bytes and value of %d, want %d and %d", len(k), len(v), l.keySize, l.valSize)
		}
		if prev != nil && bytes.Compare(prev, k) >= 0 {
			return fmt.Errorf("sherman: bulk load: keys not increasing at %x after %x", k, prev)
		}
		var err error
		switch {
		case prev == nil:
			err = b.start(make([]byte, l.keySize))
		case x.parts != nil && x.parts.index(prev) != x.parts.index(k):
			err = b.next(x.parts.bounds[x.parts.index(k)])
		case b.n == perLeaf:
			err = b.next(k)
		}
		if err != nil {
			return err
		}
		l.writeEntry(l.entry(b.img, b.n), k, v)
		b.n++
		prev = append(prev[:0], k...)
	}
	if prev == nil {
		return nil
	}
	if err := b.finish(); err != nil {
		return err
	}
	root, lvl, err := b.upper()
	if err != nil {
		return err
	}
	var w [8]byte
	binary.LittleEndian.PutUint64(w[:], rootWord(root, lvl))
	if err := ep.Write(x.rootPtr, w[:]); err != nil {
		return fmt.Errorf("sherman: bulk load: writing the root pointer: %w", err)
	}
	for i := range x.roots {
		x.roots[i].Store(nil)
	}
	return nil
}

// clampFill is how many of card slots a bulk-loaded node fills: at least
// one, and never all, since a full node splits.
func clampFill(fill float64, card int) int {
	return min(max(int(fill*float64(card)), 1), card-1)
}

// bulk builds one level at a time: the node being filled is written once
// the address of its right sibling is known.
type bulk struct {
	x    *Index
	ep   transport.Endpoint
	img  []byte          // the leaf being filled
	addr transport.GAddr // its address
	n    int             // its entries
	kids []child         // the level built so far
}

// child is a node of the level below: its low fence and address.
type child struct {
	low  []byte
	addr transport.GAddr
}

func (b *bulk) alloc(size int) (transport.GAddr, error) {
	a, err := b.x.setupMem.Alloc(b.ep, uint64(size), nodeAlign)
	if err != nil {
		return 0, fmt.Errorf("sherman: bulk load: %w", err)
	}
	b.x.nodeBytes.Add(uint64(size))
	return a, nil
}

// start begins a leaf with low fence low.
func (b *bulk) start(low []byte) error {
	a, err := b.alloc(len(b.img))
	if err != nil {
		return err
	}
	b.x.l.initNode(b.img, 0, low, nil, 0)
	b.addr, b.n = a, 0
	b.kids = append(b.kids, child{low: bytes.Clone(low), addr: a})
	return nil
}

// next closes the current leaf at high fence low and starts the next.
func (b *bulk) next(low []byte) error {
	prev, img := b.addr, bytes.Clone(b.img)
	if err := b.start(low); err != nil {
		return err
	}
	b.x.l.setHigh(img, low)
	setSibling(img, b.addr)
	return b.write(prev, img)
}

func (b *bulk) finish() error { return b.write(b.addr, b.img) }

func (b *bulk) write(a transport.GAddr, img []byte) error {
	b.x.l.setConsistent(img)
	if err := b.ep.Write(a, img); err != nil {
		return fmt.Errorf("sherman: bulk load: writing node %v: %w", a, err)
	}
	return nil
}

// upper builds the internal levels over b.kids and returns the root.
func (b *bulk) upper() (transport.GAddr, int, error) {
	l := &b.x.l
	kids := b.kids
	per := clampFill(b.x.fill, l.innerCard) + 1 // children per node
	for lvl := 1; ; lvl++ {
		if len(kids) == 1 {
			return kids[0].addr, lvl - 1, nil
		}
		if lvl >= maxLevels {
			return 0, 0, fmt.Errorf("sherman: bulk load: tree taller than %d levels", maxLevels)
		}
		var up []child
		addrs := make([]transport.GAddr, (len(kids)+per-1)/per)
		for i := range addrs {
			a, err := b.alloc(l.innerBytes)
			if err != nil {
				return 0, 0, err
			}
			addrs[i] = a
		}
		img := make([]byte, l.innerBytes)
		for i, a := range addrs {
			group := kids[i*per : min((i+1)*per, len(kids))]
			var high []byte
			var sib transport.GAddr
			if i+1 < len(addrs) {
				high, sib = kids[(i+1)*per].low, addrs[i+1]
			}
			l.initNode(img, lvl, group[0].low, high, sib)
			l.setInnerChild(img, 0, group[0].addr)
			for _, g := range group[1:] {
				l.insertInner(img, g.low, g.addr)
			}
			if err := b.write(a, img); err != nil {
				return 0, 0, err
			}
			up = append(up, child{low: group[0].low, addr: a})
		}
		kids = up
	}
}
