package chime

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes/internal/keycmp"
	"github.com/dmbench/dmbench/transport"
)

// Scan calls fn on up to n entries from start in key order. CHIME's range
// query (Tree::range_query in dmemsys/CHIME and in the DMTree artifact)
// takes a key interval [from, to); DMTree's YCSB driver passes [start,
// start+n) with keys read as big-endian integers, which holds the n
// entries when keys are dense (its scan workloads). The query finds the
// leaves of the interval in the cached level-1 nodes and READs them in one
// doorbell batch: leaves the interval covers whole are read whole; in the
// leaves at its two ends, only the neighbourhood of every key of the
// interval that falls into the leaf (the fine-grained range query), or the
// one slot the hotspot buffer names for it, merged and greedily combined
// into READs of at most half a leaf (the greedy range query). When the
// interval holds fewer than n entries (a sparse key space), the scan goes
// on from its end through the following leaves, read whole, one batch at a
// time, each sized to the entries still missing.
func (c *client) Scan(start []byte, n int, fn func(key, val []byte) bool) error {
	if n <= 0 {
		return nil
	}
	to, ok := addKey(start, uint64(n))
	if !ok {
		to = nil // the interval runs past the largest key
	}
	tasks, err := c.cover(start, to, 0)
	if err != nil {
		return err
	}
	found, err := c.rangeRounds(tasks, start, to)
	if err != nil {
		return err
	}
	found = c.ordered(found)
	from := to
	for len(found) < n && from != nil {
		// Sparse keys: continue in key order past the interval, whole
		// leaves, as many as can hold the entries still missing.
		tasks, err := c.cover(from, nil, (n-len(found)+c.g.span-1)/c.g.span)
		if err != nil {
			return err
		}
		more, err := c.rangeRounds(tasks, from, nil)
		if err != nil {
			return err
		}
		found = append(found, c.ordered(more)...)
		from = tasks[len(tasks)-1].hi
	}
	// The caller keeps the keys and values: copies, carved from one
	// allocation rather than two each.
	found = found[:min(n, len(found))]
	room := 0
	for _, e := range found {
		room += len(e.key) + len(e.val)
	}
	buf := make([]byte, 0, room)
	for _, e := range found {
		buf = append(buf, e.key...)
		key := buf[len(buf)-len(e.key) : len(buf) : len(buf)]
		buf = append(buf, e.val...)
		if !fn(key, buf[len(buf)-len(e.val):len(buf):len(buf)]) {
			return nil
		}
	}
	return nil
}

// ordered sorts entries by key and drops repeats: a leaf read again in a
// later round (a speculative miss, a split) yields some entries twice.
// The leaves come in key order, so es often is already: a stable sort
// would leave it as it is. The repeats are dropped before the sort of all
// of es is charged, while es is in the CPU cache.
func (c *client) ordered(es []entry) []entry {
	n := len(es)
	if !slices.IsSortedFunc(es, compareKeys) {
		slices.SortStableFunc(es, compareKeys)
	}
	es = slices.CompactFunc(es, func(a, b entry) bool { return compareKeys(a, b) == 0 })
	c.ep.Compute(int64(n) * cost.NodeSearch(n))
	return es
}

func compareKeys(a, b entry) int { return keycmp.Compare(a.key, b.key) }

// leafTask is a leaf a range query reads, with the fences its cached
// parent gives it: [lo, hi), nil standing for -inf and +inf. A leaf's low
// fence never changes; its high fence drops when it splits, which the
// replica read with it shows.
type leafTask struct {
	addr   transport.GAddr
	lo, hi []byte
	parent *inner // the cached level-1 node that named it; nil after a sibling
	// spec are the keys of the interval read speculatively, by the one
	// slot the hotspot buffer names: each must be found, or its
	// neighbourhood is read in the next round.
	spec [][]byte
	// followed is set once the leaf's sibling has been planned.
	followed bool
}

// cover returns the leaves whose parent fences meet [from, to) (to nil:
// no end), in key order, by the cached level-1 nodes (CHIME's
// search_range_from_cache), at most limit of them when limit > 0. A
// level-1 node the cache lacks is READ on the way down and cached.
func (c *client) cover(from, to []byte, limit int) ([]*leafTask, error) {
	var tasks []*leafTask
	k := from
	for {
		c.ep.Compute(cost.CacheLookup())
		n := c.cache.find(1, k)
		if n == nil {
			var err error
			if n, err = c.descend(k, 1); err != nil {
				return nil, err
			}
		} else {
			c.ep.Compute(cost.NodeSearch(len(n.keys)))
		}
		for i := n.upper(k); i <= len(n.keys); i++ {
			t := &leafTask{parent: n}
			if i == 0 {
				t.addr = n.leftmost
				if !n.lowInf {
					t.lo = n.low
				}
			} else {
				t.addr, t.lo = n.children[i-1], n.keys[i-1]
			}
			if i < len(n.keys) {
				t.hi = n.keys[i]
			} else if !n.highInf {
				t.hi = n.high
			}
			if to != nil && t.lo != nil && bytes.Compare(t.lo, to) >= 0 {
				return tasks, nil
			}
			tasks = append(tasks, t)
			if len(tasks) == limit {
				return tasks, nil
			}
		}
		if n.highInf || to != nil && bytes.Compare(n.high, to) >= 0 {
			return tasks, nil
		}
		k = n.high
	}
}

// slotSpan is a run of leaf slots [lo, hi) one READ covers; meta asks that
// the READ carry the replica of the leaf's metadata after its last slot
// when that slot ends a group (a neighbourhood READ does; a speculative
// READ of one entry does not).
type slotSpan struct {
	lo, hi int
	meta   bool
}

// plan returns the READs of t for the interval [from, to): the whole leaf
// when the interval covers t's fences (or has no end), else the
// neighbourhood of each key of the interval in t, or the one slot the
// hotspot buffer names for it, merged and combined greedily.
func (c *client) plan(t *leafTask, from, to []byte) []slotSpan {
	g := c.g
	lo := from
	if t.lo != nil && bytes.Compare(t.lo, from) > 0 {
		lo = t.lo
	}
	if to == nil || t.lo != nil && bytes.Compare(from, t.lo) <= 0 && t.hi != nil && bytes.Compare(t.hi, to) <= 0 {
		return []slotSpan{{0, g.span, true}}
	}
	end := to
	if t.hi != nil && bytes.Compare(t.hi, to) < 0 {
		end = t.hi
	}
	var spans []slotSpan
	covered, left := make([]bool, g.span), g.span
	probed := make([]bool, g.span) // hotspot buckets probed
	// The keys of the interval in t number at most n: end <= to = start+n.
	for k, ok := lo, true; ok && bytes.Compare(k, end) < 0; k, ok = addKey(k, 1) {
		for _, s := range c.keySpans(t, k, probed) {
			spans = append(spans, s)
			for i := s.lo; i < s.hi; i++ {
				if !covered[i] {
					covered[i], left = true, left-1
				}
			}
		}
		if left == 0 {
			// The merged READs are the whole leaf now, whatever the
			// rest of the keys add (sparse keys make them many).
			t.spec = nil
			return []slotSpan{{0, g.span, true}}
		}
	}
	return greedy(g, spans)
}

// keySpans is what the range query reads for key k of t: the one slot
// the hotspot buffer names for it (noting k as speculative), else its
// neighbourhood. probed marks the slots of t whose hotspot buckets this
// range query has probed.
func (c *client) keySpans(t *leafTask, k []byte, probed []bool) []slotSpan {
	g := c.g
	c.ep.Compute(cost.HashKey())
	h := g.home(k)
	if c.hot != nil {
		for d := range g.nbr {
			// A bucket per slot; the keys of one leaf probe the same
			// buckets again, and a bucket probed before in this range
			// query is in the CPU cache.
			if s := (h + d) % g.span; !probed[s] {
				probed[s] = true
				c.ep.Compute(cost.CacheLookup())
			}
		}
		if s, ok := c.hot.lookup(t.addr, h, g.nbr, g.span, hotFingerprint(k)); ok {
			t.spec = append(t.spec, k)
			return []slotSpan{{s, s + 1, false}}
		}
	}
	return neighbourhood(g, h)
}

// neighbourhood is the slots of home h: one span, two when it wraps.
func neighbourhood(g *geometry, h int) []slotSpan {
	if h+g.nbr <= g.span {
		return []slotSpan{{h, h + g.nbr, true}}
	}
	return []slotSpan{{h, g.span, true}, {0, h + g.nbr - g.span, true}}
}

// greedy merges overlapping or touching spans and then, as CHIME's
// greedy range query, joins neighbouring ones while the join stays within
// half a leaf of entries (maxLeafEntryPerIO), reading the gaps between
// them rather than paying a READ each.
func greedy(g *geometry, spans []slotSpan) []slotSpan {
	if len(spans) == 0 {
		return nil
	}
	slices.SortFunc(spans, func(a, b slotSpan) int { return a.lo - b.lo })
	var merged []slotSpan
	for _, s := range spans {
		if m := len(merged) - 1; m >= 0 && s.lo <= merged[m].hi {
			merged[m].hi = max(merged[m].hi, s.hi)
			merged[m].meta = merged[m].meta || s.meta
			continue
		}
		merged = append(merged, s)
	}
	perIO := max(1, g.leafBytes/2/g.entry)
	var out []slotSpan
	for _, s := range merged {
		if m := len(out) - 1; m >= 0 && max(out[m].hi, s.hi) <= out[m].lo+perIO {
			out[m].hi = max(out[m].hi, s.hi)
			out[m].meta = out[m].meta || s.meta
			continue
		}
		out = append(out, s)
	}
	return out
}

// physical is the byte range of the leaf a span's READ covers.
func (g *geometry) physical(s slotSpan) segment {
	if s.meta {
		return g.segments(s.lo, s.hi-s.lo)[0]
	}
	return segment{g.pos(g.slotOff(s.lo)), g.pos(g.slotOff(s.hi-1) + g.entry)}
}

// leafRead is the READs of one leaf in a round of a range query.
type leafRead struct {
	t      *leafTask
	spans  []slotSpan
	images []image
}

// rangeRounds READs the planned spans of tasks in one doorbell batch per
// round and returns the entries of [from, to) (to nil: no end) they hold.
// A leaf whose READs are torn, disagree on its node version or show a key
// twice (a hopscotch move in flight) is read again in the next round, as
// CHIME re-reads a segment whose versions or hop bitmaps do not check; a
// speculative slot that holds another key has its key's neighbourhood read
// in the next round; a leaf whose replica shows a high fence below what
// its cached parent promised has split: its parent is dropped from the
// cache and the sibling is read in the next round for the rest.
func (c *client) rangeRounds(tasks []*leafTask, from, to []byte) ([]entry, error) {
	g := c.g
	reads := make([]leafRead, 0, len(tasks))
	for _, t := range tasks {
		if spans := c.plan(t, from, to); len(spans) > 0 {
			reads = append(reads, leafRead{t: t, spans: spans})
		}
	}
	var found []entry
	for len(reads) > 0 {
		var ops []transport.Op
		slots := 0
		for i := range reads {
			r := &reads[i]
			r.images = make([]image, len(r.spans))
			for j, s := range r.spans {
				seg := g.physical(s)
				r.images[j] = image{base: seg.lo, buf: make([]byte, seg.hi-seg.lo)}
				ops = append(ops, transport.ReadOp(r.images[j].buf, r.t.addr.Add(uint64(seg.lo))))
				slots += s.hi - s.lo
			}
		}
		if err := c.ep.Post(ops...); err != nil {
			return nil, err
		}
		c.ep.Compute(cost.LinearScan(slots))
		var next []leafRead
		for _, r := range reads {
			live, meta, ok := c.decodeRead(&r, from, to)
			if !ok {
				next = append(next, leafRead{t: r.t, spans: r.spans})
				continue
			}
			found = append(found, live...)
			t := r.t
			var retry []slotSpan
			var missed [][]byte
			for _, k := range t.spec {
				if !slices.ContainsFunc(live, func(e entry) bool { return bytes.Equal(e.key, k) }) {
					missed = append(missed, k)
					retry = append(retry, neighbourhood(g, g.home(k))...)
				}
			}
			t.spec = nil
			if len(missed) > 0 {
				c.ep.Compute(int64(len(missed)) * cost.HashKey())
				next = append(next, leafRead{t: t, spans: greedy(g, retry)})
			}
			if meta == nil || meta.infinite || t.followed {
				continue
			}
			bound := t.hi
			if to != nil && (bound == nil || bytes.Compare(to, bound) < 0) {
				bound = to
			}
			if bound == nil || bytes.Compare(meta.high, bound) < 0 {
				// The leaf split after its parent was cached: the
				// rest of its range is to the right.
				t.parent, t.followed = c.stale(t.parent), true
				sib := &leafTask{addr: meta.sibling, lo: bytes.Clone(meta.high), hi: t.hi}
				if spans := c.plan(sib, from, to); len(spans) > 0 {
					next = append(next, leafRead{t: sib, spans: spans})
				}
			}
		}
		reads = next
	}
	return found, nil
}

// decodeRead decodes the READs of one leaf and returns its live entries
// in [from, to) and a replica of its metadata (nil when no READ carried
// one); ok is false when the leaf must be read again.
func (c *client) decodeRead(r *leafRead, from, to []byte) (live []entry, meta *rightMeta, ok bool) {
	g := c.g
	node, seen := byte(0), false
	var at []int // the slot of each live entry
	slots := 0
	for _, s := range r.spans {
		slots += s.hi - s.lo
	}
	// The slots decoded, g.entry bytes each, carved from one allocation.
	bufs := make([]byte, slots*g.entry)
	agree := func(hdr byte) bool {
		if !seen {
			node, seen = nodeVersion(hdr), true
		}
		return nodeVersion(hdr) == node
	}
	for j, s := range r.spans {
		im := &r.images[j]
		for slot := s.lo; slot < s.hi; slot++ {
			e, ok := g.slotItem(im, slot, bufs[:g.entry:g.entry])
			bufs = bufs[g.entry:]
			if !ok || !agree(e.hdr) {
				return nil, nil, false
			}
			if e.occupied() && bytes.Compare(e.key, from) >= 0 && (to == nil || bytes.Compare(e.key, to) < 0) {
				live = append(live, e)
				at = append(at, slot)
			}
		}
		for k := range g.groups {
			if !im.covers(g.pos(g.metaOff(k)), g.pos(g.metaOff(k)+g.meta)) {
				continue
			}
			m, ok := g.metaItem(im, k, make([]byte, g.meta))
			if !ok || !agree(m.hdr) {
				return nil, nil, false
			}
			meta = &m
		}
	}
	sorted := sortedByKey(live)
	c.ep.Compute(int64(len(sorted)) * cost.NodeSearch(len(sorted)))
	if duplicated(sorted) {
		// The READs overlapped a hopscotch displacement, which writes an
		// entry's new slot before clearing its old one: read again.
		return nil, nil, false
	}
	if c.hot != nil {
		// CHIME's range query records every key it finds (add_to_cache).
		fps := make([]uint16, len(live))
		for i, e := range live {
			fps[i] = hotFingerprint(e.key)
		}
		c.hot.recordAll(r.t.addr, at, fps)
	}
	return sorted, meta, true
}

// sortedByKey returns a copy of es sorted by key, keys that repeat
// adjacent (in no given order: decodeRead drops a read that repeats a
// key). With keys of one length, it sorts pairs of an index and eight
// key bytes, from where the keys start to differ, rather than the
// entries: comparing those seldom needs the keys themselves.
func sortedByKey(es []entry) []entry {
	if len(es) < 2 {
		return slices.Clone(es)
	}
	n := len(es[0].key)
	same := n // bytes that every key shares with the first
	for _, e := range es[1:] {
		if len(e.key) != n {
			same = -1
			break
		}
		for i := range same {
			if e.key[i] != es[0].key[i] {
				same = i
				break
			}
		}
	}
	if same < 0 || n < 8 {
		out := slices.Clone(es)
		slices.SortFunc(out, compareKeys)
		return out
	}
	at := min(same, n-8) // the shared bytes before at compare equal
	type pair struct {
		w uint64
		i int32
	}
	ps := make([]pair, len(es))
	for i, e := range es {
		ps[i] = pair{binary.BigEndian.Uint64(e.key[at:]), int32(i)}
	}
	slices.SortFunc(ps, func(a, b pair) int {
		if a.w != b.w {
			return cmp.Compare(a.w, b.w)
		}
		return compareKeys(es[a.i], es[b.i])
	})
	out := make([]entry, len(es))
	for k, p := range ps {
		out[k] = es[p.i]
	}
	return out
}

// duplicated reports whether sorted entries repeat a key.
func duplicated(sorted []entry) bool {
	for i := 1; i < len(sorted); i++ {
		if bytes.Equal(sorted[i-1].key, sorted[i].key) {
			return true
		}
	}
	return false
}

// addKey is key+d as a big-endian integer; ok is false when it overflows
// the key size.
func addKey(key []byte, d uint64) ([]byte, bool) {
	out := bytes.Clone(key)
	for i := len(out) - 1; i >= 0 && d > 0; i-- {
		s := uint64(out[i]) + d&0xff
		out[i] = byte(s)
		d = d>>8 + s>>8
	}
	return out, d == 0
}
