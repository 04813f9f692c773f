package blink

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"iter"

	"github.com/dmbench/dmbench/transport"
)

// BulkLoad builds the tree bottom-up from kvs (strictly increasing keys)
// through a setup endpoint, outside simulated time: leaves filled to
// bulk_fill and linked by sibling pointers and fences, then each internal
// level over the one below, every node on the next memory node in turn,
// then the root pointer, which replaces the empty root New made.
func (x *Index) BulkLoad(ep transport.Endpoint, kvs iter.Seq2[[]byte, []byte]) error {
	l := &x.l
	per := fillOf(x.fill, l.leafCard)
	var (
		level []child // the leaves, then each level above
		img   = make([]byte, l.size)
		prev  []byte
	)
	for k, v := range kvs {
		if len(k) != l.keySize || len(v) != l.valSize {
			return fmt.Errorf("blink: bulk load: key of %d bytes and value of %d, want %d and %d", len(k), len(v), l.keySize, l.valSize)
		}
		if prev != nil && bytes.Compare(prev, k) >= 0 {
			return fmt.Errorf("blink: bulk load: keys not increasing at %x after %x", k, prev)
		}
		if prev == nil || count(img) == per {
			low := k
			if prev == nil {
				low = make([]byte, l.keySize)
			}
			var err error
			if level, err = x.bulkNext(ep, level, img, 0, low); err != nil {
				return err
			}
		}
		l.leafInsertAt(img, count(img), k, v)
		prev = append(prev[:0], k...)
	}
	if prev == nil {
		return nil
	}
	if err := x.bulkWrite(ep, level[len(level)-1].addr, img); err != nil {
		return err
	}
	per = fillOf(x.fill, l.innerCard) + 1 // children per internal node
	top := 0
	for lvl := 1; len(level) > 1; lvl++ {
		if lvl >= maxLevels {
			return fmt.Errorf("blink: bulk load: tree taller than %d levels", maxLevels)
		}
		var up []child
		for i, ch := range level {
			var err error
			if i%per == 0 {
				if up, err = x.bulkNext(ep, up, img, lvl, ch.low); err != nil {
					return err
				}
				l.setInnerChild(img, 0, ch.addr)
				continue
			}
			l.innerInsert(img, ch.low, ch.addr)
		}
		if err := x.bulkWrite(ep, up[len(up)-1].addr, img); err != nil {
			return err
		}
		level, top = up, lvl
	}
	var w [8]byte
	binary.LittleEndian.PutUint64(w[:], rootWord(level[0].addr, top))
	if err := ep.Write(x.rootPtr, w[:]); err != nil {
		return fmt.Errorf("blink: bulk load: writing the root pointer: %w", err)
	}
	return nil
}

// child is a node of the level being built: its low fence and address.
type child struct {
	low  []byte
	addr transport.GAddr
}

// fillOf is how many of card slots a bulk-loaded node fills: at least
// one, at most all.
func fillOf(fill float64, card int) int { return min(max(int(fill*float64(card)), 1), card) }

// bulkNext closes the node being filled in img (the last of nodes), if
// any, at high fence low, and starts the next node of level lvl with low
// fence low.
func (x *Index) bulkNext(ep transport.Endpoint, nodes []child, img []byte, lvl int, low []byte) ([]child, error) {
	a, err := x.allocNode(ep, x.setup)
	if err != nil {
		return nil, fmt.Errorf("blink: bulk load: %w", err)
	}
	if len(nodes) > 0 {
		x.l.setHigh(img, low)
		setSibling(img, a)
		if err := x.bulkWrite(ep, nodes[len(nodes)-1].addr, img); err != nil {
			return nil, err
		}
	}
	x.l.initNode(img, lvl, low, nil, 0)
	return append(nodes, child{low: bytes.Clone(low), addr: a}), nil
}

func (x *Index) bulkWrite(ep transport.Endpoint, a transport.GAddr, img []byte) error {
	seal(img, 1)
	if err := ep.Write(a, img); err != nil {
		return fmt.Errorf("blink: bulk load: writing node %v: %w", a, err)
	}
	return nil
}
