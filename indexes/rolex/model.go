package rolex

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/dmbench/dmbench/transport"
)

// The learned model: piecewise linear segments trained on the loaded keys
// in order (ROLEX's PLR), each predicting a key's position among the
// loaded keys within +-(epsilon-1); a prediction is widened to +-epsilon
// so that a key between two loaded keys still lands in range (ROLEX
// trains with Epsilon-1 for the same reason). Keys are big-endian byte
// strings of any size, so a segment measures a key by its distance from
// the segment's first key, computed exactly and rounded to a float64:
// neighbours that differ only in their last byte stay apart however long
// the keys are.

// segment is one linear piece: positions first..end-1 of the loaded keys.
type segment struct {
	slope      float64
	start, end int64
}

// model is a compute node's copy of the model and of the leaves' upper
// fences (the last loaded key of each leaf but the last), which route an
// insert to its leaf as the port's sorted key list does.
type model struct {
	keySize  int
	span     int
	eps      int64
	leaves   int
	keys     int64
	bases    []transport.GAddr // leaf array base per memory node
	firsts   []byte            // first key of each segment
	segs     []segment
	fences   []byte // leaves-1 keys
	wireSize uint64
	// firstWords and fenceWords search firsts and fences (index builds
	// them). cacheBytes leaves them out: they speed up the simulator and
	// are no part of what ROLEX caches.
	firstWords, fenceWords keyWords
}

// keyDiff returns a-b as a float64 (negative when a < b).
func keyDiff(a, b []byte) float64 {
	c := bytes.Compare(a, b)
	if c == 0 {
		return 0
	}
	if c < 0 {
		return -keyDiff(b, a)
	}
	var buf [64]byte
	d := buf[:0]
	if len(a) > len(buf) {
		d = make([]byte, 0, len(a))
	}
	d = d[:len(a)]
	borrow := 0
	for i := len(a) - 1; i >= 0; i-- {
		x := int(a[i]) - int(b[i]) - borrow
		borrow = 0
		if x < 0 {
			x += 256
			borrow = 1
		}
		d[i] = byte(x)
	}
	j := 0
	for j < len(d) && d[j] == 0 {
		j++
	}
	var w [8]byte
	copy(w[:], d[j:])
	return math.Ldexp(float64(binary.BigEndian.Uint64(w[:])), 8*(len(d)-j-8))
}

// trainer builds segments with a shrinking cone over keys in order.
type trainer struct {
	keySize int
	tol     float64 // epsilon-1
	firsts  []byte
	segs    []segment
	first   []byte
	lo, hi  float64
	pos     int64
}

func (t *trainer) add(key []byte) {
	if t.first != nil {
		x := keyDiff(key, t.first)
		y := float64(t.pos - t.segs[len(t.segs)-1].start)
		lo, hi := max(t.lo, (y-t.tol)/x), min(t.hi, (y+t.tol)/x)
		if x > 0 && lo <= hi {
			t.lo, t.hi = lo, hi
			t.pos++
			t.segs[len(t.segs)-1].end = t.pos
			return
		}
		t.close()
	}
	t.first = append([]byte(nil), key...)
	t.firsts = append(t.firsts, key...)
	t.segs = append(t.segs, segment{start: t.pos, end: t.pos + 1})
	t.lo, t.hi = 0, math.Inf(1)
	t.pos++
}

func (t *trainer) close() {
	s := &t.segs[len(t.segs)-1]
	if !math.IsInf(t.hi, 1) {
		s.slope = (t.lo + t.hi) / 2
	}
}

// seg returns the segment that predicts key: the last whose first key is
// at or below it (the first segment for keys below every segment).
func (m *model) seg(key []byte) int {
	w := &m.firstWords
	return max(w.first(w.probe(key), false)-1, 0)
}

// index builds the searches of firsts and fences, once they are final.
func (m *model) index() {
	m.firstWords = newKeyWords(m.firsts, m.keySize)
	m.fenceWords = newKeyWords(m.fences, m.keySize)
}

// leafRange is the range of leaves [l, r] that may hold key: the
// prediction +-epsilon in positions, divided by the span.
func (m *model) leafRange(key []byte) (l, r int) {
	if m.keys == 0 {
		return 0, 0
	}
	i := m.seg(key)
	s := m.segs[i]
	p := float64(s.start) + s.slope*keyDiff(key, m.firsts[i*m.keySize:(i+1)*m.keySize])
	// Clamp in float64: a key far past the segment predicts beyond int64.
	pos := int64(math.Floor(min(max(p, float64(s.start)), float64(s.end-1))))
	lo, hi := max(pos-m.eps, 0), min(pos+m.eps, m.keys-1)
	return int(lo) / m.span, int(hi) / m.span
}

// target is the leaf an insert of key goes to: the first whose upper
// fence is at or above key, the last leaf for keys above every fence.
func (m *model) target(key []byte) int {
	w := &m.fenceWords
	return w.first(w.probe(key), true)
}

// targetNear is target(key) for a key predicted to leaves [l, r], which
// hold its target (TestTargetWithinPrediction): the fences on either side
// of the range confirm that and the search stays within it, a few
// compares on neighbouring fences instead of a search of them all. It
// searches them all if the check fails.
func (m *model) targetNear(key []byte, l, r int) int {
	w, n := &m.fenceWords, m.leaves-1
	p := w.probe(key)
	below := l == 0 || w.compare(l-1, p) < 0
	above := r >= n || w.compare(r, p) >= 0
	if !below || !above {
		return w.first(p, true)
	}
	return w.search(p, true, l, min(r, n))
}

// addr is leaf i's slot: leaves are striped over the memory nodes.
func (m *model) addr(i int, stride uint64) transport.GAddr {
	n := len(m.bases)
	return m.bases[i%n].Add(uint64(i/n) * stride)
}

// cacheBytes is the compute-side footprint: segments and fences.
func (m *model) cacheBytes() uint64 {
	return uint64(len(m.firsts)+len(m.fences)) + uint64(len(m.segs))*24 + uint64(len(m.bases))*8
}

// The model region in memory (memory node 0), written at bulk load and
// read by each compute node on its first operation:
//
//	[0, 8) leaves  [8, 16) segments  [16, 24) loaded keys
//	[24, 32) memory nodes M  [32, 40) body bytes  [40, 64) unused
//	body: M leaf-array bases (8 B each); per segment its first key
//	(K), slope (8, float64 bits), start and end positions (8 + 8);
//	then leaves-1 upper fences (K each)
const headerBytes = 64

func (m *model) marshal() (header, body []byte) {
	k := m.keySize
	body = make([]byte, 0, len(m.bases)*8+len(m.segs)*(k+24)+len(m.fences))
	for _, b := range m.bases {
		body = binary.LittleEndian.AppendUint64(body, uint64(b))
	}
	for i, s := range m.segs {
		body = append(body, m.firsts[i*k:(i+1)*k]...)
		body = binary.LittleEndian.AppendUint64(body, math.Float64bits(s.slope))
		body = binary.LittleEndian.AppendUint64(body, uint64(s.start))
		body = binary.LittleEndian.AppendUint64(body, uint64(s.end))
	}
	body = append(body, m.fences...)
	header = make([]byte, headerBytes)
	for i, v := range []uint64{uint64(m.leaves), uint64(len(m.segs)), uint64(m.keys), uint64(len(m.bases)), uint64(len(body))} {
		binary.LittleEndian.PutUint64(header[8*i:], v)
	}
	return header, body
}

func unmarshalHeader(h []byte) (leaves, segs, keys, mems, body uint64) {
	u := func(i int) uint64 { return binary.LittleEndian.Uint64(h[8*i:]) }
	return u(0), u(1), u(2), u(3), u(4)
}

func unmarshalModel(g *geometry, eps int, h, body []byte) (*model, error) {
	leaves, nsegs, keys, mems, size := unmarshalHeader(h)
	k := uint64(g.keySize)
	if want := mems*8 + nsegs*(k+24) + (leaves-1)*k; size != want || uint64(len(body)) != size || leaves == 0 {
		return nil, fmt.Errorf("model region of %d bytes for %d leaves, %d segments, %d memory nodes: want %d", len(body), leaves, nsegs, mems, want)
	}
	m := &model{keySize: g.keySize, span: g.span, eps: int64(eps), leaves: int(leaves), keys: int64(keys), wireSize: size}
	o := uint64(0)
	next := func() uint64 { v := binary.LittleEndian.Uint64(body[o:]); o += 8; return v }
	for range mems {
		m.bases = append(m.bases, transport.GAddr(next()))
	}
	for range nsegs {
		m.firsts = append(m.firsts, body[o:o+k]...)
		o += k
		s := segment{slope: math.Float64frombits(next())}
		s.start, s.end = int64(next()), int64(next())
		m.segs = append(m.segs, s)
	}
	m.fences = append([]byte(nil), body[o:]...)
	m.index()
	return m, nil
}
