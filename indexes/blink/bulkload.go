package blink

import (
	"bytes"
	"fmt"
	"iter"

	"github.com/dmbench/dmbench/indexes/internal/inner"
	"github.com/dmbench/dmbench/transport"
)

// BulkLoad builds the tree bottom-up from kvs (strictly increasing keys)
// through a setup endpoint, outside simulated time: leaves filled to
// bulk_fill and linked by sibling pointers and fences, then each internal
// level over the one below, every node on the next memory node in turn,
// then the root pointer, which replaces the empty root New made. A node
// may be filled up: it splits only when a key comes that does not fit.
func (x *Index) BulkLoad(ep transport.Endpoint, kvs iter.Seq2[[]byte, []byte]) error {
	if err := x.bulkLoad(ep, kvs); err != nil {
		return fmt.Errorf("blink: bulk load: %w", err)
	}
	return nil
}

func (x *Index) bulkLoad(ep transport.Endpoint, kvs iter.Seq2[[]byte, []byte]) error {
	l := &x.l
	per := inner.BulkFill(x.fill, l.leafCard, 0)
	var leaves []inner.Child
	img := make([]byte, l.size)
	n, err := inner.EachPair(kvs, l.keySize, l.valSize, func(prev, k, v []byte) error {
		if prev == nil || count(img) == per {
			low := k
			if prev == nil {
				low = make([]byte, l.keySize)
			}
			var err error
			if leaves, err = x.bulkNext(ep, leaves, img, low); err != nil {
				return err
			}
		}
		l.leafInsertAt(img, count(img), k, v)
		return nil
	})
	if err != nil || n == 0 {
		return err
	}
	if err := x.bulkWrite(ep, leaves[len(leaves)-1].Addr, img); err != nil {
		return err
	}
	root, lvl, err := inner.BuildLevels(leaves, inner.BulkFill(x.fill, l.innerCard, 0)+1,
		func() (transport.GAddr, error) { return x.allocNode(ep, x.setup) },
		func(a transport.GAddr, lvl int, group []inner.Child, high []byte, sib transport.GAddr) error {
			l.initNode(img, lvl, group[0].Low, high, sib)
			l.setInnerChild(img, 0, group[0].Addr)
			for _, g := range group[1:] {
				l.innerInsert(img, g.Low, g.Addr)
			}
			return x.bulkWrite(ep, a, img)
		})
	if err != nil {
		return err
	}
	return inner.WriteRoot(ep, x.rootPtr, root, lvl)
}

// bulkNext closes the leaf being filled in img (the last of leaves), if
// any, at high fence low, and starts the next leaf with low fence low.
func (x *Index) bulkNext(ep transport.Endpoint, leaves []inner.Child, img []byte, low []byte) ([]inner.Child, error) {
	a, err := x.allocNode(ep, x.setup)
	if err != nil {
		return nil, err
	}
	if len(leaves) > 0 {
		x.l.setHigh(img, low)
		setSibling(img, a)
		if err := x.bulkWrite(ep, leaves[len(leaves)-1].Addr, img); err != nil {
			return nil, err
		}
	}
	x.l.initNode(img, 0, low, nil, 0)
	return append(leaves, inner.Child{Low: bytes.Clone(low), Addr: a}), nil
}

func (x *Index) bulkWrite(ep transport.Endpoint, a transport.GAddr, img []byte) error {
	seal(img, 1)
	if err := ep.Write(a, img); err != nil {
		return fmt.Errorf("writing node %v: %w", a, err)
	}
	return nil
}
