package marlin

import (
	"bytes"
	"fmt"
	"iter"

	"github.com/dmbench/dmbench/indexes/internal/inner"
	"github.com/dmbench/dmbench/transport"
)

// BulkLoad builds the tree bottom-up from kvs (strictly increasing keys)
// through a setup endpoint, outside simulated time: every pair's data item
// (the items of one leaf allocated together), leaves filled to bulk_fill
// of their span with pointers to them and linked by sibling pointers,
// then each internal level over the one below, then the root pointer,
// which replaces the empty root New made. Marlin has no bulk load (its
// benchmarks fill the tree by inserts). A node is filled to at most all
// but two of its slots, since an insert into a leaf with one free slot
// splits it.
func (x *Index) BulkLoad(ep transport.Endpoint, kvs iter.Seq2[[]byte, []byte]) error {
	l := &x.l
	b := bulk{Bulk: x.tree.NewBulk(ep, l.leafBytes, inner.SetVersions), x: x, ep: ep}
	perLeaf := inner.BulkFill(x.fill, l.span, 2)
	n, err := inner.EachPair(kvs, l.KeySize, l.valSize, func(prev, k, v []byte) error {
		var err error
		switch {
		case prev == nil:
			err = b.Start(make([]byte, l.KeySize))
		case len(b.keys) == perLeaf:
			err = b.next(k)
		}
		if err != nil {
			return err
		}
		b.keys = append(b.keys, bytes.Clone(k))
		b.vals = append(b.vals, bytes.Clone(v))
		return nil
	})
	if err == nil && n > 0 {
		err = b.finish(inner.BulkFill(x.fill, l.span, 2) + 1)
	}
	if err != nil {
		return fmt.Errorf("marlin: bulk load: %w", err)
	}
	return nil
}

// bulk is a bulk load of the layer's kind with Marlin's data items: the
// pairs of the leaf being filled are kept until its items are written.
type bulk struct {
	*inner.Bulk
	x          *Index
	ep         transport.Endpoint
	keys, vals [][]byte // the pairs of the leaf being filled
	leaves     int      // leaves whose items are written
}

// next writes the items of the leaf being filled, closes it at high fence
// low and starts the next.
func (b *bulk) next(low []byte) error {
	if err := b.writeItems(); err != nil {
		return err
	}
	return b.Next(low)
}

// finish writes the last leaf's items and finishes the bulk load.
func (b *bulk) finish(per int) error {
	if err := b.writeItems(); err != nil {
		return err
	}
	return b.Finish(per)
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
		a, err := b.x.tree.SetupMem.AllocOn(b.ep, nodes[m], uint64(len(blk)), itemAlign)
		if err != nil {
			return err
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
		l.setSlotPtr(b.Leaf, i, uint64(bases[m].Add(uint64(off))))
		copy(l.slotKey(b.Leaf, i), b.keys[i])
	}
	for m, blk := range blocks {
		if len(blk) == 0 {
			continue
		}
		if err := b.ep.Write(bases[m], blk); err != nil {
			return fmt.Errorf("writing items at %v: %w", bases[m], err)
		}
	}
	b.leaves++
	b.keys, b.vals = b.keys[:0], b.vals[:0]
	return nil
}
