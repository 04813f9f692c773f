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
	// The READ buffers and key paths of the last scan are done with; the
	// keys and values found go to res, whose bytes the caller keeps.
	c.scratch.reset()
	var res arena
	kvs, err := c.rangeQuery(&res, start, hi.FillBytes(make([]byte, len(start))), n)
	if err == nil && len(kvs) < n && hi.Cmp(top) < 0 {
		var more []kv
		more, err = c.scanOrdered(&res, hi.Add(hi, one).FillBytes(make([]byte, len(start))), n-len(kvs))
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
	s     survivor
	kv    kv
	found bool // kv is a key found, not s a slot to follow
}

// scanOrdered returns the first need keys from lo on: SMART's range
// query over [lo, the largest key], its frontier kept in key order and
// each doorbell batch limited to the slots that can hold the next need
// keys (a node counts for as many keys as its type's smallest fill), so
// that it reads about as much as a range query holding need keys.
func (c *client) scanOrdered(res *arena, lo []byte, need int) ([]kv, error) {
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
	ar, b := &c.scratch, &c.scanBufs
	frontier := append(b.frontier[:0], fitem{s: survivor{h: h, path: ar.clone(lo[:h.depth])}})
	next := b.frontierNext[:0]
	for {
		// Pick the slots to read: in key order, until they and the keys
		// before them can hold need keys.
		pick := b.pick[:0]
		acc := 0
		for i := 0; i < len(frontier) && acc < need; i++ {
			if frontier[i].found {
				acc++
				continue
			}
			pick = append(pick, i)
			acc += fill(frontier[i].s.h.p, c.x.dex)
		}
		b.pick = pick
		if len(pick) == 0 {
			break
		}
		ops := b.ops[:0]
		for _, i := range pick {
			s := frontier[i].s
			if absent(s.h.p) {
				ops = append(ops, transport.Op{})
				continue
			}
			ops = append(ops, transport.ReadOp(ar.take(c.readSize(s.h.p)), slotTarget(s.h.p)))
		}
		batch := b.batch[:0]
		for _, o := range ops {
			if o.Buf != nil {
				batch = append(batch, o)
			}
		}
		b.ops, b.batch = ops, batch
		if len(batch) > 0 {
			if err := c.ep.Post(batch...); err != nil {
				return nil, fmt.Errorf("reading the next slots in key order: %w", err)
			}
		}
		// The next frontier: each picked slot replaced, in place, by what
		// it holds in key order (nothing, a key, or its children).
		next = next[:0]
		k := 0
		for i, f := range frontier {
			if k == len(pick) || pick[k] != i {
				next = append(next, f)
				continue
			}
			s := f.s
			switch {
			case absent(s.h.p) && s.h.cached:
				fresh, err := c.reread(s.h)
				if err != nil {
					return nil, err
				}
				next = append(next, fitem{s: survivor{h: fresh, path: s.path}})
			case absent(s.h.p):
			default:
				more, found, ok, err := c.scanOne(ar, res, s, ops[k].Buf, lo, top, b.more[:0])
				if err != nil {
					return nil, err
				}
				slices.SortFunc(more, func(a, b survivor) int { return bytes.Compare(a.path, b.path) })
				for _, m := range more {
					next = append(next, fitem{s: m})
				}
				b.more = more
				if ok {
					next = append(next, fitem{kv: found, found: true})
				}
			}
			k++
		}
		frontier, next = next, frontier
	}
	b.frontier, b.frontierNext = frontier, next
	var out []kv
	for _, f := range frontier {
		if len(out) == need || !f.found {
			break
		}
		out = append(out, f.kv)
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

// scanBufs are a client's range-query slices, kept from one query to the
// next so that a level of the walk does not allocate them afresh.
type scanBufs struct {
	ops, batch  []transport.Op
	level, next []survivor // the level being read and the one it yields
	more        []survivor // an ordered scan's children of one node
	pick        []int      // the frontier entries an ordered scan reads
	// frontier and frontierNext are an ordered scan's frontier before and
	// after a round of READs.
	frontier, frontierNext []fitem
}

// rangeQuery returns the keys of [lo, hi] in order, as SMART's range
// query finds them: from the deepest cached slot covering the interval,
// level by level, one doorbell batch of READs per level for every node
// and leaf in range (one READ per leaf, each leaf holding one key).
func (c *client) rangeQuery(res *arena, lo, hi []byte, want int) ([]kv, error) {
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
	out := make([]kv, 0, want)
	ar, b := &c.scratch, &c.scanBufs
	level := append(b.level[:0], survivor{h: h, path: ar.clone(lo[:h.depth])})
	next := b.next[:0]
	for len(level) > 0 {
		// ops[i] reads level[i] once level drops the empty slots; a zero
		// op marks a cached slot found empty, read again by reread.
		ops, kept := b.ops[:0], level[:0]
		for _, s := range level {
			switch {
			case absent(s.h.p) && s.h.cached:
				fresh, err := c.reread(s.h)
				if err != nil {
					return nil, err
				}
				s.h = fresh
				ops = append(ops, transport.Op{})
			case absent(s.h.p):
				continue
			default:
				ops = append(ops, transport.ReadOp(ar.take(c.readSize(s.h.p)), slotTarget(s.h.p)))
			}
			kept = append(kept, s)
		}
		level = kept
		batch := b.batch[:0]
		for _, o := range ops {
			if o.Buf != nil {
				batch = append(batch, o)
			}
		}
		b.ops, b.batch = ops, batch
		if len(batch) > 0 {
			if err := c.ep.Post(batch...); err != nil {
				return nil, fmt.Errorf("reading a level of the range: %w", err)
			}
		}
		next = next[:0]
		for i, s := range level {
			if ops[i].Buf == nil {
				next = append(next, s) // a cached slot read again
				continue
			}
			var found kv
			var ok bool
			var err error
			next, found, ok, err = c.scanOne(ar, res, s, ops[i].Buf, lo, hi, next)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, found)
			}
		}
		level, next = next, level
	}
	b.level, b.next = level, next
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
// is a result (ok), its key and value carved from res; a node's slots in
// range, their paths carved from ar, are appended to more, as is a slot
// read again because what it pointed to had changed.
func (c *client) scanOne(ar, res *arena, s survivor, buf []byte, lo, hi []byte, more []survivor) (_ []survivor, found kv, ok bool, err error) {
	if isLeaf(s.h.p) {
		lf := c.ll.decode(buf)
		c.ep.Compute(cost.Checksum(c.ll.ks + c.ll.vs))
		if !c.ll.consistent(lf) {
			if lf, _, err = c.readLeaf(slotTarget(s.h.p)); err != nil {
				return more, kv{}, false, err
			}
		}
		if s.h.cached && (lf.rev != s.h.pPtr || !lf.valid) {
			fresh, err := c.reread(s.h)
			return append(more, survivor{h: fresh, path: s.path}), kv{}, false, err
		}
		if !lf.valid || bytes.Compare(lf.key, lo) < 0 || bytes.Compare(lf.key, hi) > 0 {
			return more, kv{}, false, nil
		}
		return more, kv{key: res.clone(lf.key), val: res.clone(lf.val)}, true, nil
	}
	a := slotTarget(s.h.p)
	t := slotType(s.h.p)
	hdr := decodeHeader(binary.LittleEndian.Uint64(buf[nodeHeader:]))
	if hdr.typ > t && hdr.typ < numTypes {
		rest := make([]byte, nodeReadBytes(hdr.typ)-len(buf))
		if err := c.read(rest, a.Add(uint64(len(buf)))); err != nil {
			return more, kv{}, false, fmt.Errorf("reading the rest of node %v: %w", a, err)
		}
		buf = append(buf, rest...)
	}
	// The node's slots are read straight from buf: decodeNode's copy of
	// them was most of a scan's allocation.
	rev := transport.GAddr(binary.LittleEndian.Uint64(buf[nodeRev:]))
	hdr = decodeHeader(binary.LittleEndian.Uint64(buf[nodeHeader:]))
	if hdr.depth != s.h.depth || (s.h.cached && rev != s.h.pPtr) {
		fresh, err := c.reread(s.h)
		return append(more, survivor{h: fresh, path: s.path}), kv{}, false, err
	}
	full := ar.take(len(s.path) + hdr.plen)
	copy(full, s.path)
	copy(full[len(s.path):], hdr.prefix[:hdr.plen])
	if !within(full, lo, hi) {
		return more, kv{}, false, nil
	}
	d := len(full)
	if d >= len(lo) {
		return more, kv{}, false, fmt.Errorf("%w: node %v at depth %d with a %d-byte prefix", errCorrupt, a, hdr.depth, hdr.plen)
	}
	slots := (len(buf) - nodeSlots) / 8
	c.ep.Compute(cost.FingerprintProbe(slots))
	// A child's path is full and its partial byte, and full lies within
	// [lo, hi]: the path does too unless full is lo's first d bytes and
	// the byte is below lo's next, or hi's and above hi's (within, by
	// bytes, without building the paths a scan drops).
	atLo, atHi := bytes.Equal(full, lo[:d]), bytes.Equal(full, hi[:d])
	for i := range slots {
		e := binary.LittleEndian.Uint64(buf[nodeSlots+8*i:])
		if absent(e) {
			continue
		}
		b := partialOf(e)
		if atLo && b < lo[d] || atHi && b > hi[d] {
			continue
		}
		path := ar.take(d + 1)
		copy(path, full)
		path[d] = b
		more = append(more, survivor{h: hop{pPtr: slotAddr(a, i), p: e, depth: d + 1}, path: path})
	}
	return more, kv{}, false, nil
}

// arena hands out bytes from slabs, so that a range query over a hundred
// leaves does not allocate for each of its READ buffers, key paths and
// results, nor a bulk load for each record. Bytes once handed out are not
// handed out again until reset, so a slice stays valid after later ones
// are taken; each slice's capacity ends with it, so appending to it
// copies.
type arena struct {
	slab  []byte   // the slab being carved
	slabs [][]byte // every slab kept, in carving order
	next  int      // the kept slab to carve after this one
}

// arenaSlab is the size of a slab: a few dozen leaf READs.
const arenaSlab = 4 << 10

func (ar *arena) take(n int) []byte {
	if n > arenaSlab {
		return make([]byte, n)
	}
	if cap(ar.slab)-len(ar.slab) < n {
		if ar.next == len(ar.slabs) {
			ar.slabs = append(ar.slabs, make([]byte, 0, arenaSlab))
		}
		ar.slab = ar.slabs[ar.next][:0]
		ar.next++
	}
	i := len(ar.slab)
	ar.slab = ar.slab[:i+n]
	return ar.slab[i : i+n : i+n]
}

// reset hands the kept slabs out again: every slice taken before is the
// arena's to overwrite. Taken bytes are not zeroed; each caller fills
// what it takes.
func (ar *arena) reset() { ar.slab, ar.next = nil, 0 }

func (ar *arena) clone(b []byte) []byte {
	c := ar.take(len(b))
	copy(c, b)
	return c
}

// within reports whether keys with prefix p can lie in [lo, hi].
func within(p, lo, hi []byte) bool {
	return bytes.Compare(p, lo[:len(p)]) >= 0 && bytes.Compare(p, hi[:len(p)]) <= 0
}
