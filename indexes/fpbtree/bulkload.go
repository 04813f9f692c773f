package fpbtree

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"iter"
	"math"

	"github.com/dmbench/dmbench/transport"
)

// BulkLoad builds the tree bottom-up from kvs (increasing key order):
// leaves filled to Fill of their span, each with its fingerprint table
// written where the placement puts it, then the internal levels, and
// finally the root pointer. It replaces the empty tree NewTree made.
func (t *Tree) BulkLoad(ep transport.Endpoint, kvs iter.Seq2[[]byte, []byte]) error {
	if err := t.build(ep, kvs); err != nil {
		return fmt.Errorf("%s bulk load: %w", t.opts.Name, err)
	}
	return nil
}

// loader writes one level at a time, delaying each node until the next
// one's low fence and address are known (its high fence and sibling).
type loader struct {
	t     *Tree
	ep    transport.Endpoint
	alloc *transport.Allocator
}

type pendingLeaf struct {
	addr transport.GAddr
	fp   uint64
	low  []byte
	keys [][]byte
	vals [][]byte
}

func (t *Tree) build(ep transport.Endpoint, kvs iter.Seq2[[]byte, []byte]) error {
	l := &loader{t: t, ep: ep, alloc: t.allocs[ep.Node()]}
	per := max(1, int(math.Round(t.opts.Fill*float64(t.G.Span))))
	var level []ientry
	var cur *pendingLeaf
	var prev []byte
	flush := func(next *pendingLeaf) error {
		if cur == nil {
			return nil
		}
		level = append(level, entryOf(cur.low, cur.addr, 1, cur.fp))
		return l.writeLeaf(cur, next)
	}
	start := func(low []byte) (*pendingLeaf, error) {
		a, err := l.alloc.Alloc(ep, uint64(t.G.LeafSize), 64)
		if err != nil {
			return nil, err
		}
		fp, err := t.place.NewTable(ep, a)
		if err != nil {
			return nil, err
		}
		t.leaves.Add(1)
		return &pendingLeaf{addr: a, fp: fp, low: low}, nil
	}
	var err error
	if cur, err = start(make([]byte, t.G.K)); err != nil {
		return err
	}
	if kvs != nil {
		for k, v := range kvs {
			if len(k) != t.G.K || len(v) != t.G.V {
				return fmt.Errorf("record %x: key of %d bytes and value of %d, want %d and %d", k, len(k), len(v), t.G.K, t.G.V)
			}
			if prev != nil && bytes.Compare(prev, k) >= 0 {
				return fmt.Errorf("keys not in increasing order at %x", k)
			}
			prev = bytes.Clone(k)
			if len(cur.keys) == per {
				next, err := start(bytes.Clone(k))
				if err != nil {
					return err
				}
				if err := flush(next); err != nil {
					return err
				}
				cur = next
			}
			cur.keys = append(cur.keys, bytes.Clone(k))
			cur.vals = append(cur.vals, bytes.Clone(v))
		}
	}
	if err := flush(nil); err != nil {
		return err
	}
	root, err := l.internalLevels(level)
	if err != nil {
		return err
	}
	return ep.Write(t.root, binary.LittleEndian.AppendUint64(nil, uint64(root)))
}

// writeLeaf writes a leaf image (header, entries) and its table.
func (l *loader) writeLeaf(p *pendingLeaf, next *pendingLeaf) error {
	g := &l.t.G
	img := make([]byte, g.LeafSize)
	h := leafHeader{version: 1, fp: p.fp, low: p.low, high: make([]byte, g.K)}
	if next == nil {
		h.flags = flagInf
	} else {
		h.sibling, h.high = next.addr, next.low
	}
	g.encodeLeafHeader(img, &h)
	tbl := Table{FPs: make([]byte, g.Span), Version: 1}
	for i := range g.Span {
		e := img[g.entryOff(i):]
		if i < len(p.keys) {
			g.encodeEntry(e, true, 1, p.keys[i], p.vals[i])
			tbl.FPs[i] = Fingerprint(p.keys[i])
		} else {
			g.encodeEntry(e, false, 1, make([]byte, g.K), make([]byte, g.V))
		}
	}
	if err := l.ep.Write(p.addr, img); err != nil {
		return err
	}
	return l.t.writeTableTo(l.ep, p.addr, p.fp, &tbl, 0)
}

// internalLevels builds internal levels over ents until one node remains
// and returns the root's address.
func (l *loader) internalLevels(ents []ientry) (transport.GAddr, error) {
	g := &l.t.G
	per := max(2, int(math.Round(l.t.opts.Fill*float64(g.ISpan))))
	for level := 1; ; level++ {
		var nodes []*inode
		for i := 0; i < len(ents); i += per {
			n := &inode{version: 1, level: level, low: ikeyOf(ents[i].key), high: ikeyOf(make([]byte, g.K)), ents: ents[i:min(i+per, len(ents))]}
			a, err := l.alloc.Alloc(l.ep, uint64(g.NodeSize), 64)
			if err != nil {
				return 0, err
			}
			l.t.inners.Add(1)
			n.addr = a
			nodes = append(nodes, n)
		}
		var up []ientry
		for i, n := range nodes {
			if i+1 < len(nodes) {
				n.sibling, n.high = nodes[i+1].addr, nodes[i+1].low
			} else {
				n.flags = flagInf
			}
			img := make([]byte, g.NodeSize)
			g.encodeNode(img, n)
			if err := l.ep.Write(n.addr, img); err != nil {
				return 0, err
			}
			up = append(up, entryOf(n.low.b, n.addr, 0, 0))
		}
		if len(nodes) == 1 {
			return nodes[0].addr, nil
		}
		ents = up
	}
}

// writeTableTo writes a table block for leaf with lock word lock to the
// table's primary location.
func (t *Tree) writeTableTo(ep transport.Endpoint, leaf transport.GAddr, fp uint64, tbl *Table, lock uint64) error {
	a, err := t.place.Primary(leaf, fp)
	if err != nil {
		return err
	}
	b := make([]byte, t.G.Table)
	t.G.EncodeTable(b, tbl, lock)
	return ep.Write(a, b)
}
