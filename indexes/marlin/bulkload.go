package marlin

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"iter"

	"github.com/dmbench/dmbench/transport"
)

// BulkLoad builds the tree bottom-up from kvs (strictly increasing keys)
// through a setup endpoint, outside simulated time: every pair's data item
// (the items of one leaf allocated together), leaves filled to bulk_fill
// of their span with pointers to them and linked by sibling pointers,
// then each internal level over the one below, then the root pointer,
// which replaces the empty root New made. Marlin has no bulk load (its
// benchmarks fill the tree by inserts).
func (x *Index) BulkLoad(ep transport.Endpoint, kvs iter.Seq2[[]byte, []byte]) error {
	l := &x.l
	b := bulk{x: x, ep: ep, img: make([]byte, l.leafBytes)}
	perLeaf := clampFill(x.fill, l.span)
	var prev []byte
	for k, v := range kvs {
		if len(k) != l.keySize || len(v) != l.valSize {
			return fmt.Errorf("marlin: bulk load: key of %d bytes and value of %d, want %d and %d", len(k), len(v), l.keySize, l.valSize)
		}
		if prev != nil && bytes.Compare(prev, k) >= 0 {
			return fmt.Errorf("marlin: bulk load: keys not increasing at %x after %x", k, prev)
		}
		var err error
		switch {
		case prev == nil:
			err = b.start(make([]byte, l.keySize))
		case len(b.keys) == perLeaf:
			err = b.next(k)
		}
		if err != nil {
			return err
		}
		b.keys = append(b.keys, bytes.Clone(k))
		b.vals = append(b.vals, bytes.Clone(v))
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
		return fmt.Errorf("marlin: bulk load: writing the root pointer: %w", err)
	}
	for i := range x.roots {
		x.roots[i].Store(nil)
	}
	return nil
}

// clampFill is how many of card slots a bulk-loaded node fills: at least
// one, and at most card-2, since an insert into a leaf with one free slot
// splits it.
func clampFill(fill float64, card int) int {
	return min(max(int(fill*float64(card)), 1), card-2)
}

// bulk builds one level at a time: the leaf being filled is written once
// the address of its right sibling is known.
type bulk struct {
	x          *Index
	ep         transport.Endpoint
	img        []byte          // the leaf being filled
	addr       transport.GAddr // its address
	keys, vals [][]byte        // its pairs
	leaves     int             // leaves whose items are written
	kids       []child         // the level built so far
}

// child is a node of the level below: its low fence and address.
type child struct {
	low  []byte
	addr transport.GAddr
}

func (b *bulk) alloc(size int, align uint64) (transport.GAddr, error) {
	a, err := b.x.setupMem.Alloc(b.ep, uint64(size), align)
	if err != nil {
		return 0, fmt.Errorf("marlin: bulk load: %w", err)
	}
	return a, nil
}

// start begins a leaf with low fence low.
func (b *bulk) start(low []byte) error {
	a, err := b.alloc(len(b.img), nodeAlign)
	if err != nil {
		return err
	}
	b.x.nodeBytes.Add(uint64(len(b.img)))
	b.x.l.initNode(b.img, 0, low, nil, 0)
	b.addr, b.keys, b.vals = a, b.keys[:0], b.vals[:0]
	b.kids = append(b.kids, child{low: bytes.Clone(low), addr: a})
	return nil
}

// next closes the current leaf at high fence low and starts the next.
func (b *bulk) next(low []byte) error {
	prev := b.addr
	if err := b.writeItems(); err != nil {
		return err
	}
	img := bytes.Clone(b.img)
	if err := b.start(low); err != nil {
		return err
	}
	b.x.l.setHigh(img, low)
	setSibling(img, b.addr)
	return b.write(prev, img)
}

func (b *bulk) finish() error {
	if err := b.writeItems(); err != nil {
		return err
	}
	return b.write(b.addr, b.img)
}

// writeItems writes the current leaf's items and points its slots at
// them. Item i of the leaf goes to memory node (i + leaves) mod the
// memory nodes, the items of one node in one block, so that a leaf's items
// spread over the memory nodes as items allocated by writes over time do
// (and a scan's item READs with them).
func (b *bulk) writeItems() error {
	l := &b.x.l
	nodes := b.x.env.Fabric.Config().MemoryNodeIDs()
	blocks := make([][]byte, len(nodes))
	for i := range b.keys {
		m := (i + b.leaves) % len(nodes)
		blocks[m] = append(blocks[m], make([]byte, l.itemBytes)...)
	}
	bases := make([]transport.GAddr, len(nodes))
	for m, blk := range blocks {
		if len(blk) == 0 {
			continue
		}
		a, err := b.x.setupMem.AllocOn(b.ep, nodes[m], uint64(len(blk)), itemAlign)
		if err != nil {
			return fmt.Errorf("marlin: bulk load: %w", err)
		}
		bases[m] = a
		b.x.itemBytes.Add(uint64(len(blk)))
	}
	next := make([]int, len(nodes))
	for i := range b.keys {
		m := (i + b.leaves) % len(nodes)
		off := next[m] * l.itemBytes
		next[m]++
		l.fillItem(blocks[m][off:], b.keys[i], b.vals[i])
		l.setSlotPtr(b.img, i, uint64(bases[m].Add(uint64(off))))
		copy(l.slotKey(b.img, i), b.keys[i])
	}
	for m, blk := range blocks {
		if len(blk) == 0 {
			continue
		}
		if err := b.ep.Write(bases[m], blk); err != nil {
			return fmt.Errorf("marlin: bulk load: writing items at %v: %w", bases[m], err)
		}
	}
	b.leaves++
	return nil
}

func (b *bulk) write(a transport.GAddr, img []byte) error {
	setConsistent(img)
	if err := b.ep.Write(a, img); err != nil {
		return fmt.Errorf("marlin: bulk load: writing node %v: %w", a, err)
	}
	return nil
}

// upper builds the internal levels over b.kids and returns the root.
func (b *bulk) upper() (transport.GAddr, int, error) {
	l := &b.x.l
	kids := b.kids
	per := clampFill(b.x.fill, l.span) + 1 // children per node
	for lvl := 1; ; lvl++ {
		if len(kids) == 1 {
			return kids[0].addr, lvl - 1, nil
		}
		if lvl >= maxLevels {
			return 0, 0, fmt.Errorf("marlin: bulk load: tree taller than %d levels", maxLevels)
		}
		var up []child
		addrs := make([]transport.GAddr, (len(kids)+per-1)/per)
		for i := range addrs {
			a, err := b.alloc(l.innerBytes, nodeAlign)
			if err != nil {
				return 0, 0, err
			}
			b.x.nodeBytes.Add(uint64(l.innerBytes))
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
