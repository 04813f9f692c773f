package smart

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/big"
	"slices"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// Scan calls fn on up to n entries from start in key order. SMART scans a
// key interval, not a count (its range query takes [from, to)): the first
// interval is [start, start+n) with keys read as big-endian numbers, what
// DEX and DMTree pass it; if that holds fewer than n keys (a sparse key
// space) the next interval follows, sized by the density seen so far.
func (c *client) Scan(start []byte, n int, fn func(key, val []byte) bool) error {
	if err := c.check("scan", start, nil); err != nil {
		return err
	}
	if n <= 0 {
		return nil
	}
	one := big.NewInt(1)
	top := new(big.Int).Sub(new(big.Int).Lsh(one, uint(8*len(start))), one) // the largest key
	lo := new(big.Int).SetBytes(start)
	width := big.NewInt(int64(n))
	covered := new(big.Int)
	found := 0
	for {
		hi := new(big.Int).Add(lo, width)
		hi.Sub(hi, one)
		if hi.Cmp(top) > 0 {
			hi.Set(top)
		}
		kvs, err := c.rangeQuery(lo.FillBytes(make([]byte, len(start))), hi.FillBytes(make([]byte, len(start))))
		if err != nil {
			return fmt.Errorf("smart: scan from %x: %w", start, err)
		}
		for _, kv := range kvs {
			if found == n {
				return nil
			}
			found++
			if !fn(kv.key, kv.val) {
				return nil
			}
		}
		if found == n || hi.Cmp(top) == 0 {
			return nil
		}
		covered.Add(covered, width)
		if found > 0 {
			// Size the next interval by the density seen so far.
			width.Mul(covered, big.NewInt(int64(n-found)))
			width.Quo(width, big.NewInt(int64(found)))
			width.Add(width, one)
		} else {
			// Nothing yet: widen by a key byte.
			width.Lsh(covered, 8)
		}
		lo.Add(hi, one)
	}
}

type kv struct{ key, val []byte }

// survivor is a slot a range query still has to follow, with the key
// bytes of the path to it.
type survivor struct {
	h    hop
	path []byte
}

// rangeQuery returns the keys of [lo, hi] in order, as SMART's range
// query finds them: from the deepest cached slot covering the interval,
// level by level, one doorbell batch of READs per level for every node
// and leaf in range (one READ per leaf, each leaf holding one key).
func (c *client) rangeQuery(lo, hi []byte) ([]kv, error) {
	lcp := 0
	for lcp < len(lo) && lo[lcp] == hi[lcp] {
		lcp++
	}
	c.ep.Compute(cost.CacheLookup())
	h, probes, ok := c.cn.cache.lookupRange(lo, lcp, c.x.rootPtr)
	c.ep.Compute(cost.FingerprintProbe(probes))
	if !ok {
		var err error
		if h, err = c.reread(hop{pPtr: c.x.rootPtr}); err != nil {
			return nil, err
		}
	}
	var out []kv
	level := []survivor{{h: h, path: bytes.Clone(lo[:h.depth])}}
	for len(level) > 0 {
		ops := make([]transport.Op, 0, len(level))
		var reads []survivor
		for _, s := range level {
			switch {
			case absent(s.h.p):
				if s.h.cached {
					fresh, err := c.reread(s.h)
					if err != nil {
						return nil, err
					}
					s.h = fresh
					reads = append(reads, s)
					ops = append(ops, transport.Op{})
				}
				continue
			case isLeaf(s.h.p):
				ops = append(ops, transport.ReadOp(make([]byte, c.ll.size), slotTarget(s.h.p)))
			default:
				ops = append(ops, transport.ReadOp(make([]byte, nodeReadBytes(slotType(s.h.p))), slotTarget(s.h.p)))
			}
			reads = append(reads, s)
		}
		var batch []transport.Op
		for _, o := range ops {
			if o.Buf != nil {
				batch = append(batch, o)
			}
		}
		if len(batch) > 0 {
			if err := c.ep.Post(batch...); err != nil {
				return nil, fmt.Errorf("reading a level of the range: %w", err)
			}
		}
		var next []survivor
		for i, s := range reads {
			if ops[i].Buf == nil {
				next = append(next, s) // a cached root slot read again
				continue
			}
			more, kvs, err := c.scanOne(s, ops[i].Buf, lo, hi)
			if err != nil {
				return nil, err
			}
			next = append(next, more...)
			out = append(out, kvs...)
		}
		level = next
	}
	c.ep.Compute(int64(len(out)) * cost.NodeSearch(len(out)))
	slices.SortFunc(out, func(a, b kv) int { return bytes.Compare(a.key, b.key) })
	return out, nil
}

// scanOne processes one node or leaf a range query read: a leaf in range
// is a result; a node yields its slots in range.
func (c *client) scanOne(s survivor, buf []byte, lo, hi []byte) ([]survivor, []kv, error) {
	if isLeaf(s.h.p) {
		lf := c.ll.decode(buf)
		c.ep.Compute(cost.Checksum(c.ll.ks + c.ll.vs))
		if !c.ll.consistent(lf) {
			var err error
			if lf, _, err = c.readLeaf(slotTarget(s.h.p)); err != nil {
				return nil, nil, err
			}
		}
		if s.h.cached && (lf.rev != s.h.pPtr || !lf.valid) {
			fresh, err := c.reread(s.h)
			return []survivor{{h: fresh, path: s.path}}, nil, err
		}
		if !lf.valid || bytes.Compare(lf.key, lo) < 0 || bytes.Compare(lf.key, hi) > 0 {
			return nil, nil, nil
		}
		return nil, []kv{{key: bytes.Clone(lf.key), val: bytes.Clone(lf.val)}}, nil
	}
	a := slotTarget(s.h.p)
	t := slotType(s.h.p)
	hdr := decodeHeader(binary.LittleEndian.Uint64(buf[nodeHeader:]))
	if hdr.typ > t && hdr.typ < numTypes {
		rest := make([]byte, nodeReadBytes(hdr.typ)-len(buf))
		if err := c.read(rest, a.Add(uint64(len(buf)))); err != nil {
			return nil, nil, fmt.Errorf("reading the rest of node %v: %w", a, err)
		}
		buf = append(buf, rest...)
	}
	n := decodeNode(buf)
	if n.hdr.depth != s.h.depth || (s.h.cached && n.rev != s.h.pPtr) {
		fresh, err := c.reread(s.h)
		return []survivor{{h: fresh, path: s.path}}, nil, err
	}
	full := append(bytes.Clone(s.path), n.hdr.prefix[:n.hdr.plen]...)
	if !within(full, lo, hi) {
		return nil, nil, nil
	}
	d := len(full)
	if d >= len(lo) {
		return nil, nil, fmt.Errorf("%w: node %v at depth %d with a %d-byte prefix", errCorrupt, a, n.hdr.depth, n.hdr.plen)
	}
	c.ep.Compute(cost.FingerprintProbe(len(n.slots)))
	var more []survivor
	for i, e := range n.slots {
		if absent(e) {
			continue
		}
		path := append(bytes.Clone(full), partialOf(e))
		if within(path, lo, hi) {
			more = append(more, survivor{h: hop{pPtr: slotAddr(a, i), p: e, depth: d + 1}, path: path})
		}
	}
	return more, nil, nil
}

// within reports whether keys with prefix p can lie in [lo, hi].
func within(p, lo, hi []byte) bool {
	return bytes.Compare(p, lo[:len(p)]) >= 0 && bytes.Compare(p, hi[:len(p)]) <= 0
}
