package chime

import (
	"bytes"
	"errors"
	"slices"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// window is a run of consecutive leaf slots (mod span) read in one go:
// a search's neighbourhood, a writer's neighbourhood extended to the
// nearest vacancy, or a whole leaf. Hopscotch insertion works on it.
type window struct {
	g      *geometry
	leaf   transport.GAddr
	first  int // slot of slots[0]
	slots  []entry
	meta   rightMeta // a replica of the leaf's right metadata
	node   byte      // node version every item agreed on
	images []image
	writes []int // window indices rewritten, in the order they must land
	// raw backs the images; items holds the decoded entries, then the
	// replica; ops is the READs. readWindow reuses them all.
	raw, items []byte
	ops        []transport.Op
	// fresh marks a leaf being laid out before anyone can read it (or
	// rewritten whole under a new node version): its moves may wrap.
	fresh bool
}

var errTorn = errors.New("torn leaf read")

// slot is the leaf slot of window index i; index the reverse.
func (w *window) slot(i int) int  { return (w.first + i) % w.g.span }
func (w *window) index(s int) int { return (s - w.first + w.g.span) % w.g.span }

// dist is how far slot s lies past home h, around the ring.
func (g *geometry) dist(h, s int) int { return (s - h + g.span) % g.span }

// owns reports whether key belongs to the leaf by its high fence.
func (w *window) owns(key []byte) bool {
	return w.meta.infinite || bytes.Compare(key, w.meta.high) < 0
}

// readWindow READs n slots of leaf from slot first (one READ, two when
// they wrap, in one doorbell) and decodes them. errTorn reports a READ that
// overlapped a WRITE: a torn item or items of different node versions (a
// split landed during the READ).
//
// The window is the client's own, and its next readWindow overwrites it
// and the entries decoded into it: allocating a window, its images and an
// item per slot on every search was an eighth of the simulator's time. No
// operation holds a window across another READ of one, and what it
// returns is a copy.
func (c *client) readWindow(leaf transport.GAddr, first, n int) (*window, error) {
	g := c.g
	n = min(n, g.span)
	segs := g.segments(first, n)
	size := 0
	for _, s := range segs {
		size += s.hi - s.lo
	}
	w := &c.win
	*w = window{
		g: g, leaf: leaf, first: first % g.span,
		slots:  slices.Grow(w.slots[:0], n)[:n],
		images: w.images[:0],
		writes: w.writes[:0],
		raw:    slices.Grow(w.raw[:0], size)[:size],
		items:  slices.Grow(w.items[:0], n*g.entry+g.meta)[:n*g.entry+g.meta],
		ops:    w.ops[:0],
	}
	at := 0
	for _, s := range segs {
		buf := w.raw[at : at+s.hi-s.lo]
		at += len(buf)
		w.images = append(w.images, image{base: s.lo, buf: buf})
		w.ops = append(w.ops, transport.ReadOp(buf, leaf.Add(uint64(s.lo))))
	}
	if err := c.ep.Post(w.ops...); err != nil {
		return nil, err
	}
	c.ep.Compute(cost.LinearScan(n))
	if err := w.decode(); err != nil {
		return nil, err
	}
	return w, nil
}

// imageOf returns the image holding physical [lo, hi).
func (w *window) imageOf(lo, hi int) *image {
	for i := range w.images {
		if w.images[i].covers(lo, hi) {
			return &w.images[i]
		}
	}
	return nil
}

func (w *window) decode() error {
	g := w.g
	seen := false
	agree := func(hdr byte) bool {
		if !seen {
			w.node, seen = nodeVersion(hdr), true
		}
		return nodeVersion(hdr) == w.node
	}
	for i := range w.slots {
		s := w.slot(i)
		lo, hi := g.slotRange(s)
		e, ok := g.slotItem(w.imageOf(lo, hi), s, w.items[i*g.entry:])
		if !ok || !agree(e.hdr) {
			return errTorn
		}
		w.slots[i] = e
	}
	found := false
	for k := range g.groups {
		lo, hi := g.pos(g.metaOff(k)), g.pos(g.metaOff(k)+g.meta)
		im := w.imageOf(lo, hi)
		if im == nil {
			continue
		}
		m, ok := g.metaItem(im, k, w.items[len(w.slots)*g.entry:])
		if !ok || !agree(m.hdr) {
			return errTorn
		}
		w.meta, found = m, true
	}
	if !found {
		return errTorn
	}
	return nil
}

// find returns the window index holding key, or -1.
func (w *window) find(key []byte) int {
	for i := range w.slots {
		if w.slots[i].occupied() && bytes.Equal(w.slots[i].key, key) {
			return i
		}
	}
	return -1
}

// set rewrites window index i, advancing its entry version, and queues
// its WRITE after those queued before it.
func (w *window) set(i int, key, val []byte) {
	w.slots[i] = entry{hdr: bumpEntry(w.slots[i].hdr, key != nil), key: bytes.Clone(key), val: bytes.Clone(val)}
	w.writes = append(w.writes, i)
}

// hop is one hopscotch displacement: the entry at window index from moves
// to window index to.
type hop struct{ from, to int }

// place finds where a new key with home slot h goes: the empty slot,
// and the displacements that bring it within h's neighbourhood, nearest
// displacements last. ok is false when no empty slot of the window can be
// brought there. home hashes an entry's key (the caller charges it).
func (w *window) place(h int, home func([]byte) int) (at int, hops []hop, ok bool) {
	g := w.g
	reach := g.span // slots past h the window holds
	if len(w.slots) < g.span {
		reach = len(w.slots) - w.index(h)
	}
	at = -1
	for d := 0; d < reach; d++ {
		if i := w.index((h + d) % g.span); !w.slots[i].occupied() {
			at = i
			break
		}
	}
	if at < 0 {
		return 0, nil, false
	}
	for de := g.dist(h, w.slot(at)); de >= g.nbr; de = g.dist(h, w.slot(at)) {
		moved := false
		for dj := de - g.nbr + 1; dj < de; dj++ {
			j := w.index((h + dj) % g.span)
			// Moves only go up in address: readers scan a leaf upwards
			// and a move writes its new slot first, so they always meet
			// the entry. A move around the ring's end would not be safe.
			if !w.slots[j].occupied() || !w.fresh && w.slot(j) > w.slot(at) {
				continue
			}
			if g.dist(home(w.slots[j].key), w.slot(at)) < g.nbr {
				hops = append(hops, hop{from: j, to: at})
				at, moved = j, true
				break
			}
		}
		if !moved {
			return 0, nil, false
		}
	}
	return at, hops, true
}

// insert places key in the window by hopscotch displacement, queueing the
// WRITEs so that every moved entry lands at its new slot before its old
// slot is overwritten: a concurrent reader scanning the neighbourhood in
// address order then always meets it.
func (w *window) insert(key, val []byte, h int, home func([]byte) int) bool {
	at, hops, ok := w.place(h, home)
	if !ok {
		return false
	}
	for _, hp := range hops {
		src := w.slots[hp.from]
		w.set(hp.to, src.key, src.val)
	}
	w.set(at, key, val)
	return true
}

// vacancy recomputes the vacancy bitmap from old: buckets wholly inside
// the window become exact; buckets it covers partly keep their bit unless
// an empty slot was seen (a set bit means "may have room").
func (w *window) vacancy(old uint64) uint64 {
	g := w.g
	v := old &^ lockBit
	for b := range g.buckets {
		lo, hi := g.bucketSlots(b)
		whole, empty := true, false
		for s := lo; s < hi; s++ {
			i := w.index(s)
			if i >= len(w.slots) {
				whole = false
				continue
			}
			empty = empty || !w.slots[i].occupied()
		}
		switch {
		case empty:
			v |= 1 << b
		case whole:
			v &^= 1 << b
		}
	}
	return v
}

// writeOps renders the queued slot WRITEs against leaf, in order.
func (w *window) writeOps() []transport.Op {
	g := w.g
	ops := make([]transport.Op, 0, len(w.writes))
	for _, i := range w.writes {
		s := w.slot(i)
		lo, hi := g.slotRange(s)
		im := image{base: lo, buf: make([]byte, hi-lo)}
		g.putSlot(&im, s, w.slots[i])
		ops = append(ops, transport.WriteOp(w.leaf.Add(uint64(lo)), im.buf))
	}
	return ops
}
