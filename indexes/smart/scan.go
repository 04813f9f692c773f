package smart

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"math/big"
	"math/bits"
	"slices"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes/internal/keycmp"
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

// An ordered scan's frontier holds, in key order, keys found, slots still
// to follow, and groups: the children of a node read that are still to
// follow, which become slots only when a round picks them (a 256-slot
// node has up to 256 children, and a scan often needs a few). It is a
// stack with its first item on top, so that a round rewrites only the
// items it reads and the keys before them. Items are indices into
// scanBufs' keys, surv and groups, which only grow during a scan.
type fitem struct {
	kind uint8 // fKey, fSlot or fGroup
	i    int32
}

const (
	fKey = iota
	fSlot
	fGroup
)

// group is the children of a node that an ordered scan has still to
// follow: once ordered, order[next:end] of scanBufs, slot indices in key
// order. A group is ordered when a round first reaches it: most are
// never reached, the scan having found its keys in the groups before.
type group struct {
	kids      children
	next, end int32
	ordered   bool
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
	b.keys, b.groups, b.order = b.keys[:0], b.groups[:0], b.order[:0]
	b.surv = append(b.surv[:0], survivor{h: h, path: ar.clone(lo[:h.depth])})
	stack := append(b.frontier[:0], fitem{kind: fSlot})
	for {
		// Pick the slots to read: in key order, until they and the keys
		// before them can hold need keys. prefix lists them and those
		// keys in key order: what the round replaces on top of the stack,
		// but for a group picked in part, which stays there.
		prefix := b.prefix[:0]
		picked, acc, j := 0, 0, len(stack)
		for j > 0 && acc < need {
			it := stack[j-1]
			switch it.kind {
			case fKey:
				acc++
			case fSlot:
				picked++
				acc += fill(b.surv[it.i].h.p, c.x.dex)
			case fGroup:
				g := &b.groups[it.i]
				if !g.ordered {
					g.next = int32(len(b.order))
					b.order = g.kids.appendOrder(b.order)
					g.end, g.ordered = int32(len(b.order)), true
				}
				for g.next < g.end && acc < need {
					s := g.kids.child(ar, int(b.order[g.next]))
					g.next++
					b.surv = append(b.surv, s)
					prefix = append(prefix, fitem{kind: fSlot, i: int32(len(b.surv) - 1)})
					picked++
					acc += fill(s.h.p, c.x.dex)
				}
				if g.next < g.end {
					continue // acc has reached need
				}
				j--
				continue
			}
			prefix = append(prefix, it)
			j--
		}
		b.prefix = prefix
		if picked == 0 {
			break
		}
		batch := b.batch[:0]
		for _, it := range prefix {
			if it.kind != fSlot {
				continue
			}
			if p := b.surv[it.i].h.p; !absent(p) {
				batch = append(batch, transport.ReadOp(ar.take(c.readSize(p)), slotTarget(p)))
			}
		}
		b.batch = batch
		if len(batch) > 0 {
			if err := c.ep.Post(batch...); err != nil {
				return nil, fmt.Errorf("reading the next slots in key order: %w", err)
			}
		}
		// What replaces the prefix: each picked slot by what it holds in
		// key order (nothing, a key, or its children).
		stack = stack[:j]
		repl := b.repl[:0]
		k := 0
		for _, it := range prefix {
			if it.kind == fKey {
				repl = append(repl, it)
				continue
			}
			s := b.surv[it.i]
			switch {
			case absent(s.h.p) && s.h.cached:
				fresh, err := c.reread(s.h)
				if err != nil {
					return nil, err
				}
				repl = b.pushSlot(repl, survivor{h: fresh, path: s.path})
			case absent(s.h.p):
			case isLeaf(s.h.p):
				found, ok, again, err := c.scanLeaf(res, s, batch[k].Buf, lo, top)
				k++
				if err != nil {
					return nil, err
				}
				if again != nil {
					repl = b.pushSlot(repl, *again)
				}
				if ok {
					b.keys = append(b.keys, found)
					repl = append(repl, fitem{kind: fKey, i: int32(len(b.keys) - 1)})
				}
			default:
				kids, again, err := c.scanNode(ar, s, batch[k].Buf, lo, top)
				k++
				if err != nil {
					return nil, err
				}
				if again != nil {
					repl = b.pushSlot(repl, *again)
				}
				if kids.slots != nil {
					b.groups = append(b.groups, group{kids: kids})
					repl = append(repl, fitem{kind: fGroup, i: int32(len(b.groups) - 1)})
				}
			}
		}
		b.repl = repl
		for i := len(repl) - 1; i >= 0; i-- {
			stack = append(stack, repl[i])
		}
	}
	b.frontier = stack
	// The keys on top, past the groups that the last round found empty.
	var out []kv
	for i := len(stack) - 1; i >= 0 && len(out) < need; i-- {
		it := stack[i]
		if it.kind == fGroup && b.groups[it.i].ordered && b.groups[it.i].next == b.groups[it.i].end {
			continue
		}
		if it.kind != fKey {
			break
		}
		out = append(out, b.keys[it.i])
	}
	return out, nil
}

// pushSlot appends s to the slots of an ordered scan and an item for it
// to items.
func (b *scanBufs) pushSlot(items []fitem, s survivor) []fitem {
	b.surv = append(b.surv, s)
	return append(items, fitem{kind: fSlot, i: int32(len(b.surv) - 1)})
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
	batch       []transport.Op
	level, next []survivor // the level being read and the one it yields
	again       []int      // the level's slots read again, not READ in the batch
	// An ordered scan's frontier (a stack), the items a round reads and
	// those that replace them, and what the items index.
	frontier, prefix, repl []fitem
	keys                   []kv
	surv                   []survivor
	groups                 []group
	order                  []uint8
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
	ar, b := &c.scratch, &c.scanBufs
	out := make([]kv, 0, want)
	sorted := false
	level := append(b.level[:0], survivor{h: h, path: ar.clone(lo[:h.depth])})
	next := b.next[:0]
	for len(level) > 0 {
		// batch READs the level's slots in order, but for the empty ones:
		// a cached slot found empty is read again by reread (again lists
		// those), an uncached one dropped.
		batch, again, kept := b.batch[:0], b.again[:0], level[:0]
		for _, s := range level {
			switch {
			case absent(s.h.p) && s.h.cached:
				fresh, err := c.reread(s.h)
				if err != nil {
					return nil, err
				}
				s.h = fresh
				again = append(again, len(kept))
			case absent(s.h.p):
				continue
			default:
				batch = append(batch, transport.ReadOp(ar.take(c.readSize(s.h.p)), slotTarget(s.h.p)))
			}
			kept = append(kept, s)
		}
		level = kept
		b.batch, b.again = batch, again
		if len(batch) > 0 {
			if err := c.ep.Post(batch...); err != nil {
				return nil, fmt.Errorf("reading a level of the range: %w", err)
			}
		}
		next = next[:0]
		if found, ok := c.leafLevel(res, level, batch, lo, hi, out); ok {
			// A level of leaves is the last. The keys are sorted before
			// the checksums are charged, while they are in the CPU cache.
			out, sorted = found, true
			slices.SortFunc(out, compareKeys)
			for range level {
				c.ep.Compute(cost.Checksum(c.ll.ks + c.ll.vs))
			}
			break
		}
		k := 0
		for i, s := range level {
			if len(again) > 0 && again[0] == i {
				again = again[1:]
				next = append(next, s) // a cached slot read again
				continue
			}
			var found kv
			var ok bool
			var err error
			next, found, ok, err = c.scanOne(ar, res, s, batch[k].Buf, lo, hi, next)
			k++
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
	if !sorted {
		slices.SortFunc(out, compareKeys)
	}
	return out, nil
}

// leafLevel processes a level of leaves read, none of them cached, as
// scanOne would: it appends those in [lo, hi] to out in level order. It
// reports false, with out as it was, when one of them needs more than
// its READ (a node, a cached slot, a leaf read torn), for scanOne to
// process the level. The caller then charges the leaves' checksums, a
// wait each: the checks depend only on the READ buffers, so they can all
// be done first, in one pass that finds level and buffers still in the
// CPU cache, which the other clients' work during each wait evicts.
func (c *client) leafLevel(res *arena, level []survivor, batch []transport.Op, lo, hi []byte, out []kv) ([]kv, bool) {
	if len(level) != len(batch) { // a slot read again
		return out, false
	}
	n := len(out)
	for k, s := range level {
		if !isLeaf(s.h.p) || s.h.cached {
			return out[:n], false
		}
		lf := c.ll.decode(batch[k].Buf)
		if !c.ll.consistent(lf) {
			return out[:n], false
		}
		if lf.valid && keycmp.Compare(lf.key, lo) >= 0 && keycmp.Compare(lf.key, hi) <= 0 {
			out = append(out, kv{key: res.clone(lf.key), val: res.clone(lf.val)})
		}
	}
	return out, true
}

func compareKeys(a, b kv) int { return keycmp.Compare(a.key, b.key) }

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
	var again *survivor
	if isLeaf(s.h.p) {
		found, ok, again, err = c.scanLeaf(res, s, buf, lo, hi)
	} else {
		var kids children
		kids, again, err = c.scanNode(ar, s, buf, lo, hi)
		for i := range len(kids.slots) / 8 {
			if kids.in(i) {
				more = append(more, kids.child(ar, i))
			}
		}
	}
	if again != nil {
		more = append(more, *again)
	}
	return more, found, ok, err
}

// scanLeaf processes a leaf a range query read: in range, it is a result
// (ok), its key and value carved from res; again is the slot read again
// when what it pointed to had changed.
func (c *client) scanLeaf(res *arena, s survivor, buf []byte, lo, hi []byte) (found kv, ok bool, again *survivor, err error) {
	lf := c.ll.decode(buf)
	c.ep.Compute(cost.Checksum(c.ll.ks + c.ll.vs))
	if !c.ll.consistent(lf) {
		if lf, _, err = c.readLeaf(slotTarget(s.h.p)); err != nil {
			return kv{}, false, nil, err
		}
	}
	if s.h.cached && (lf.rev != s.h.pPtr || !lf.valid) {
		fresh, err := c.reread(s.h)
		if err != nil {
			return kv{}, false, nil, err
		}
		return kv{}, false, &survivor{h: fresh, path: s.path}, nil
	}
	if !lf.valid || keycmp.Compare(lf.key, lo) < 0 || keycmp.Compare(lf.key, hi) > 0 {
		return kv{}, false, nil, nil
	}
	return kv{key: res.clone(lf.key), val: res.clone(lf.val)}, true, nil, nil
}

// scanNode processes a node a range query read, READing the rest of it
// when it has grown: it returns the node's children in [lo, hi] (none
// when the node lies outside), or again, the slot read again when what
// it pointed to had changed.
func (c *client) scanNode(ar *arena, s survivor, buf []byte, lo, hi []byte) (kids children, again *survivor, err error) {
	a := slotTarget(s.h.p)
	t := slotType(s.h.p)
	hdr := decodeHeader(binary.LittleEndian.Uint64(buf[nodeHeader:]))
	if hdr.typ > t && hdr.typ < numTypes {
		rest := make([]byte, nodeReadBytes(hdr.typ)-len(buf))
		if err := c.read(rest, a.Add(uint64(len(buf)))); err != nil {
			return children{}, nil, fmt.Errorf("reading the rest of node %v: %w", a, err)
		}
		buf = append(buf, rest...)
	}
	// The node's slots are read straight from buf: decodeNode's copy of
	// them was most of a scan's allocation.
	rev := transport.GAddr(binary.LittleEndian.Uint64(buf[nodeRev:]))
	hdr = decodeHeader(binary.LittleEndian.Uint64(buf[nodeHeader:]))
	if hdr.depth != s.h.depth || (s.h.cached && rev != s.h.pPtr) {
		fresh, err := c.reread(s.h)
		if err != nil {
			return children{}, nil, err
		}
		return children{}, &survivor{h: fresh, path: s.path}, nil
	}
	full := ar.take(len(s.path) + hdr.plen)
	copy(full, s.path)
	copy(full[len(s.path):], hdr.prefix[:hdr.plen])
	if !within(full, lo, hi) {
		return children{}, nil, nil
	}
	d := len(full)
	if d >= len(lo) {
		return children{}, nil, fmt.Errorf("%w: node %v at depth %d with a %d-byte prefix", errCorrupt, a, hdr.depth, hdr.plen)
	}
	c.ep.Compute(cost.FingerprintProbe((len(buf) - nodeSlots) / 8))
	// A child's path is full and its partial byte, and full lies within
	// [lo, hi]: the path does too unless full is lo's first d bytes and
	// the byte is below lo's next, or hi's and above hi's (within, by
	// bytes, without building the paths a scan drops).
	kids = children{a: a, full: full, slots: buf[nodeSlots:], max: 0xff}
	if bytes.Equal(full, lo[:d]) {
		kids.min = lo[d]
	}
	if bytes.Equal(full, hi[:d]) {
		kids.max = hi[d]
	}
	return kids, nil, nil
}

// children are the slots of a node a range query read that lie in its
// interval: present, with a partial byte in [min, max].
type children struct {
	a        transport.GAddr // the node
	full     []byte          // the node's path and prefix: its children's paths but their byte
	slots    []byte          // the node's slot words as read
	min, max byte
}

func (k *children) word(i int) uint64 { return binary.LittleEndian.Uint64(k.slots[8*i:]) }

// in reports whether slot i is one of the children.
func (k *children) in(i int) bool {
	e := k.word(i)
	b := partialOf(e)
	return !absent(e) && b >= k.min && b <= k.max
}

// child is slot i to follow, its path carved from ar.
func (k *children) child(ar *arena, i int) survivor {
	d := len(k.full)
	path := ar.take(d + 1)
	copy(path, k.full)
	e := k.word(i)
	path[d] = partialOf(e)
	return survivor{h: hop{pPtr: slotAddr(k.a, i), p: e, depth: d + 1}, path: path}
}

// appendOrder appends the children's slot indices to order in key order,
// that is by partial byte. A node holds each byte once, so a bitmap of
// the bytes orders them without a sort. Should a byte occur twice, a
// sort by byte orders them, and puts equal bytes in the order the sort
// of their paths did before groups were introduced, so results stay the same.
func (k *children) appendOrder(order []uint8) []uint8 {
	var seen [4]uint64
	var at [256]uint8
	for i := range len(k.slots) / 8 {
		if !k.in(i) {
			continue
		}
		b := partialOf(k.word(i))
		if seen[b/64]&(1<<(b%64)) != 0 {
			return k.appendSorted(order)
		}
		seen[b/64] |= 1 << (b % 64)
		at[b] = uint8(i)
	}
	for w, set := range seen {
		for ; set != 0; set &= set - 1 {
			order = append(order, at[64*w+bits.TrailingZeros64(set)])
		}
	}
	return order
}

func (k *children) appendSorted(order []uint8) []uint8 {
	start := len(order)
	for i := range len(k.slots) / 8 {
		if k.in(i) {
			order = append(order, uint8(i))
		}
	}
	slices.SortFunc(order[start:], func(x, y uint8) int {
		return cmp.Compare(partialOf(k.word(int(x))), partialOf(k.word(int(y))))
	})
	return order
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
