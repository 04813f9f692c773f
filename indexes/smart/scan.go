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
// DEX and DMTree pass it, and holds the n keys when keys are dense. If it
// holds fewer (a sparse key space), the scan goes on past it in key order
// (scanOrdered) until it has n.
func (c *client) Scan(start []byte, n int, fn func(key, val []byte) bool) error {
	if err := c.check("scan", start, nil); err != nil {
		return err
	}
	if n <= 0 {
		return nil
	}
	one := big.NewInt(1)
	top := new(big.Int).Sub(new(big.Int).Lsh(one, uint(8*len(start))), one) // the largest key
	hi := new(big.Int).SetBytes(start)
	hi.Add(hi, big.NewInt(int64(n-1)))
	if hi.Cmp(top) > 0 {
		hi.Set(top)
	}
	kvs, err := c.rangeQuery(start, hi.FillBytes(make([]byte, len(start))))
	if err == nil && len(kvs) < n && hi.Cmp(top) < 0 {
		var more []kv
		more, err = c.scanOrdered(hi.Add(hi, one).FillBytes(make([]byte, len(start))), n-len(kvs))
		kvs = append(kvs, more...)
	}
	if err != nil {
		return fmt.Errorf("smart: scan from %x: %w", start, err)
	}
	for i, kv := range kvs {
		if i == n || !fn(kv.key, kv.val) {
			return nil
		}
	}
	return nil
}

// fitem is an entry of an ordered scan's frontier: a slot still to
// follow, or a key found.
type fitem struct {
	s  survivor
	kv *kv
}

// scanOrdered returns the first need keys from lo on: SMART's range
// query over [lo, the largest key], its frontier kept in key order and
// each doorbell batch limited to the slots that can hold the next need
// keys (a node counts for as many keys as its type's smallest fill), so
// that it reads about as much as a range query holding need keys.
func (c *client) scanOrdered(lo []byte, need int) ([]kv, error) {
	top := bytes.Repeat([]byte{0xff}, len(lo))
	lcp := 0
	for lcp < len(lo) && lo[lcp] == 0xff {
		lcp++
	}
	c.ep.Compute(cost.CacheLookup())
	h, probes, ok := c.cn.cache.lookupRange(lo, lcp)
	c.ep.Compute(cost.FingerprintProbe(probes))
	if !ok {
		var err error
		if h, err = c.reread(hop{pPtr: c.x.rootPtr}); err != nil {
			return nil, err
		}
	}
	var ar arena
	frontier := []fitem{{s: survivor{h: h, path: ar.clone(lo[:h.depth])}}}
	for {
		// Pick the slots to read: in key order, until they and the keys
		// before them can hold need keys.
		var pick []int
		acc := 0
		for i := 0; i < len(frontier) && acc < need; i++ {
			if frontier[i].kv != nil {
				acc++
				continue
			}
			pick = append(pick, i)
			acc += fill(frontier[i].s.h.p, c.x.dex)
		}
		if len(pick) == 0 {
			break
		}
		ops := make([]transport.Op, 0, len(pick))
		for _, i := range pick {
			s := frontier[i].s
			if absent(s.h.p) {
				ops = append(ops, transport.Op{})
				continue
			}
			ops = append(ops, transport.ReadOp(ar.take(c.readSize(s.h.p)), slotTarget(s.h.p)))
		}
		batch := make([]transport.Op, 0, len(ops))
		for _, o := range ops {
			if o.Buf != nil {
				batch = append(batch, o)
			}
		}
		if len(batch) > 0 {
			if err := c.ep.Post(batch...); err != nil {
				return nil, fmt.Errorf("reading the next slots in key order: %w", err)
			}
		}
		replace := make(map[int][]fitem, len(pick))
		for k, i := range pick {
			s := frontier[i].s
			var items []fitem
			switch {
			case absent(s.h.p) && s.h.cached:
				fresh, err := c.reread(s.h)
				if err != nil {
					return nil, err
				}
				items = []fitem{{s: survivor{h: fresh, path: s.path}}}
			case absent(s.h.p):
			default:
				more, found, ok, err := c.scanOne(&ar, s, ops[k].Buf, lo, top)
				if err != nil {
					return nil, err
				}
				slices.SortFunc(more, func(a, b survivor) int { return bytes.Compare(a.path, b.path) })
				items = make([]fitem, 0, len(more)+1)
				for _, m := range more {
					items = append(items, fitem{s: m})
				}
				if ok {
					items = append(items, fitem{kv: &found})
				}
			}
			replace[i] = items
		}
		next := make([]fitem, 0, len(frontier))
		for i, f := range frontier {
			if items, ok := replace[i]; ok {
				next = append(next, items...)
			} else {
				next = append(next, f)
			}
		}
		frontier = next
	}
	var out []kv
	for _, f := range frontier {
		if len(out) == need || f.kv == nil {
			break
		}
		out = append(out, *f.kv)
	}
	return out, nil
}

// fill is how many keys a slot is counted for when an ordered scan
// chooses what to read: one for a leaf, for a node the fewest children a
// node of its type holds (two with variant=dex, whose nodes all have the
// 256-slot type).
func fill(s uint64, dex bool) int {
	switch {
	case absent(s):
		return 0
	case isLeaf(s):
		return 1
	case slotType(s) == 0 || dex:
		return 2
	default:
		return capacity(slotType(s)-1) + 1
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
	h, probes, ok := c.cn.cache.lookupRange(lo, lcp)
	c.ep.Compute(cost.FingerprintProbe(probes))
	if !ok {
		var err error
		if h, err = c.reread(hop{pPtr: c.x.rootPtr}); err != nil {
			return nil, err
		}
	}
	var out []kv
	var ar arena
	level := []survivor{{h: h, path: ar.clone(lo[:h.depth])}}
	for len(level) > 0 {
		ops := make([]transport.Op, 0, len(level))
		reads := make([]survivor, 0, len(level))
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
			default:
				ops = append(ops, transport.ReadOp(ar.take(c.readSize(s.h.p)), slotTarget(s.h.p)))
			}
			reads = append(reads, s)
		}
		batch := make([]transport.Op, 0, len(ops))
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
				next = append(next, s) // a cached slot read again
				continue
			}
			more, found, ok, err := c.scanOne(&ar, s, ops[i].Buf, lo, hi)
			if err != nil {
				return nil, err
			}
			next = append(next, more...)
			if ok {
				out = append(out, found)
			}
		}
		level = next
	}
	c.ep.Compute(int64(len(out)) * cost.NodeSearch(len(out)))
	slices.SortFunc(out, func(a, b kv) int { return bytes.Compare(a.key, b.key) })
	return out, nil
}

// readSize is how many bytes a range query READs for the node or leaf a
// slot points to.
func (c *client) readSize(p uint64) int {
	if isLeaf(p) {
		return c.ll.size
	}
	return nodeReadBytes(slotType(p))
}

// scanOne processes one node or leaf a range query read: a leaf in range
// is a result (ok); a node yields its slots in range. Results and paths
// are carved from ar.
func (c *client) scanOne(ar *arena, s survivor, buf []byte, lo, hi []byte) (more []survivor, found kv, ok bool, err error) {
	if isLeaf(s.h.p) {
		lf := c.ll.decode(buf)
		c.ep.Compute(cost.Checksum(c.ll.ks + c.ll.vs))
		if !c.ll.consistent(lf) {
			if lf, _, err = c.readLeaf(slotTarget(s.h.p)); err != nil {
				return nil, kv{}, false, err
			}
		}
		if s.h.cached && (lf.rev != s.h.pPtr || !lf.valid) {
			fresh, err := c.reread(s.h)
			return []survivor{{h: fresh, path: s.path}}, kv{}, false, err
		}
		if !lf.valid || bytes.Compare(lf.key, lo) < 0 || bytes.Compare(lf.key, hi) > 0 {
			return nil, kv{}, false, nil
		}
		return nil, kv{key: ar.clone(lf.key), val: ar.clone(lf.val)}, true, nil
	}
	a := slotTarget(s.h.p)
	t := slotType(s.h.p)
	hdr := decodeHeader(binary.LittleEndian.Uint64(buf[nodeHeader:]))
	if hdr.typ > t && hdr.typ < numTypes {
		rest := make([]byte, nodeReadBytes(hdr.typ)-len(buf))
		if err := c.read(rest, a.Add(uint64(len(buf)))); err != nil {
			return nil, kv{}, false, fmt.Errorf("reading the rest of node %v: %w", a, err)
		}
		buf = append(buf, rest...)
	}
	// The node's slots are read straight from buf: decodeNode's copy of
	// them was most of a scan's allocation.
	rev := transport.GAddr(binary.LittleEndian.Uint64(buf[nodeRev:]))
	hdr = decodeHeader(binary.LittleEndian.Uint64(buf[nodeHeader:]))
	if hdr.depth != s.h.depth || (s.h.cached && rev != s.h.pPtr) {
		fresh, err := c.reread(s.h)
		return []survivor{{h: fresh, path: s.path}}, kv{}, false, err
	}
	full := ar.take(len(s.path) + hdr.plen)
	copy(full, s.path)
	copy(full[len(s.path):], hdr.prefix[:hdr.plen])
	if !within(full, lo, hi) {
		return nil, kv{}, false, nil
	}
	d := len(full)
	if d >= len(lo) {
		return nil, kv{}, false, fmt.Errorf("%w: node %v at depth %d with a %d-byte prefix", errCorrupt, a, hdr.depth, hdr.plen)
	}
	slots := (len(buf) - nodeSlots) / 8
	c.ep.Compute(cost.FingerprintProbe(slots))
	children := 0
	for i := range slots {
		if !absent(binary.LittleEndian.Uint64(buf[nodeSlots+8*i:])) {
			children++
		}
	}
	more = make([]survivor, 0, children)
	for i := range slots {
		e := binary.LittleEndian.Uint64(buf[nodeSlots+8*i:])
		if absent(e) {
			continue
		}
		path := ar.take(d + 1)
		copy(path, full)
		path[d] = partialOf(e)
		if within(path, lo, hi) {
			more = append(more, survivor{h: hop{pPtr: slotAddr(a, i), p: e, depth: d + 1}, path: path})
		}
	}
	return more, kv{}, false, nil
}

// arena hands out the bytes of one range query (READ buffers, the key
// paths of the slots still to follow, the keys and values found) from
// slabs, so that a query over a hundred leaves does not allocate for each.
// Bytes once handed out are never handed out again, so a slice stays
// valid after later ones are taken; each slice's capacity ends with it,
// so appending to it copies.
type arena struct{ slab []byte }

// arenaSlab is the size of a fresh slab: a few dozen leaf READs.
const arenaSlab = 4 << 10

func (ar *arena) take(n int) []byte {
	if cap(ar.slab)-len(ar.slab) < n {
		ar.slab = make([]byte, 0, max(n, arenaSlab))
	}
	i := len(ar.slab)
	ar.slab = ar.slab[:i+n]
	return ar.slab[i : i+n : i+n]
}

func (ar *arena) clone(b []byte) []byte {
	c := ar.take(len(b))
	copy(c, b)
	return c
}

// within reports whether keys with prefix p can lie in [lo, hi].
func within(p, lo, hi []byte) bool {
	return bytes.Compare(p, lo[:len(p)]) >= 0 && bytes.Compare(p, hi[:len(p)]) <= 0
}
