package rftree

import (
	"bytes"
	"fmt"
	"iter"
	"sync/atomic"

	"github.com/dmbench/dmbench/indexes/internal/inner"
	"github.com/dmbench/dmbench/transport"
)

// BulkLoad builds the tree bottom-up from kvs (strictly increasing keys)
// through a setup endpoint, outside simulated time: data nodes filled to
// bulk_fill of their capacity and linked by sibling pointers, placed on
// the memory nodes in turn; then each internal level, appended to the
// search layer's chunks; then the root word. The paper loads by inserts
// (Load A); the workloads that start from a loaded tree get the same kind
// of tree at a chosen fill. A node is filled to at most all but one of
// its slots, since a full node splits. Every compute node's SLC is
// dropped, so the first operation on each reads the search layer.
func (x *Index) BulkLoad(ep transport.Endpoint, kvs iter.Seq2[[]byte, []byte]) error {
	if err := x.bulkLoad(ep, kvs); err != nil {
		return fmt.Errorf("rftree: bulk load: %w", err)
	}
	return nil
}

func (x *Index) bulkLoad(ep transport.Endpoint, kvs iter.Seq2[[]byte, []byte]) error {
	l := &x.l
	b := bulk{x: x, ep: ep, img: make([]byte, l.nodeBytes)}
	b.chunk.Store(-1)
	perLeaf := inner.BulkFill(x.fill, l.leafCard, 1)
	n, err := inner.EachPair(kvs, l.keySize, l.valSize, func(prev, k, v []byte) error {
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
		return nil
	})
	if err != nil || n == 0 {
		return err
	}
	if err := b.write(b.addr, b.img); err != nil {
		return err
	}
	img := make([]byte, l.nodeBytes)
	root, lvl, err := inner.BuildLevels(b.leaves, inner.BulkFill(x.fill, l.innerCard, 1)+1,
		func() (transport.GAddr, error) { return x.allocInternal(ep, x.setup, &b.chunk, func() {}) },
		func(a transport.GAddr, lvl int, group []inner.Child, high []byte, sib transport.GAddr) error {
			l.initNode(img, lvl, group[0].Low, high, sib, 0)
			l.setInnerChild(img, 0, group[0].Addr)
			for _, g := range group[1:] {
				l.innerInsert(img, g.Low, g.Addr)
			}
			return b.write(a, img)
		})
	if err != nil {
		return err
	}
	if err := inner.WriteRoot(ep, x.rootPtr, root, lvl); err != nil {
		return err
	}
	for _, cn := range x.cns {
		cn.slc.Store(nil)
	}
	return nil
}

// bulk builds the data-node level: a node is written once the address of
// its right sibling is known.
type bulk struct {
	x      *Index
	ep     transport.Endpoint
	img    []byte
	addr   transport.GAddr
	leaves []inner.Child
	chunk  atomic.Int64 // the search-layer chunk internal nodes go to
}

func (b *bulk) start(low []byte) error {
	a, err := b.x.setup.Alloc(b.ep, uint64(b.x.l.nodeBytes), nodeAlign)
	if err != nil {
		return err
	}
	b.x.dataBytes.Add(uint64(b.x.l.nodeBytes))
	b.x.l.initNode(b.img, 0, low, nil, 0, 0)
	b.addr = a
	b.leaves = append(b.leaves, inner.Child{Low: bytes.Clone(low), Addr: a})
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
		return fmt.Errorf("writing node %v: %w", a, err)
	}
	return nil
}
