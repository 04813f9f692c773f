package chime

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"

	"github.com/dmbench/dmbench/transport"
)

// Leaf geometry (doc.go draws it). A leaf is a 64-byte header cacheline
// holding the lock words and the low fence, then a stream of items packed
// back to back across cachelines. Byte 0 of every cacheline of the stream
// is a version byte, so each line carries 63 bytes of items. The items are
// span entries in groups of nbr (the hopscotch neighbourhood), each group
// followed by a replica of the leaf's right metadata (sibling and high
// fence): any nbr consecutive slots then cover exactly one replica, so a
// neighbourhood READ validates itself (CHIME's metadata replication).
const (
	lineBytes    = transport.CachelineBytes
	linePayload  = lineBytes - 1
	offLockWord  = 0  // 8 B: vacancy bitmap in the low bits; bit 63 the lock under masked CAS
	offCASWord   = 8  // 8 B lock word of plain-CAS mode: 0 free, 1 held
	offLowFlags  = 16 // 1 B: bit 0 set when the low fence is -inf
	offLowFence  = 17 // K B low fence (inclusive)
	lockBit      = uint64(1) << 63
	maxVacancy   = 63 // vacancy buckets that fit beside the lock bit
	occupiedBit  = 0x80
	nodeVerShift = 4
	nodeVerMask  = 0x70
	entryVerMask = 0x0f
	versionMask  = nodeVerMask | entryVerMask
	flagInfinite = 1 // low fence -inf (header) or high fence +inf (meta)
)

// geometry is the layout of every leaf of one index.
type geometry struct {
	keySize, valSize int
	span, nbr        int
	groups           int // metadata replicas: ceil(span / nbr)
	entry            int // item bytes of an entry: [hdr][key][value]
	meta             int // item bytes of a replica: [hdr][flags][sibling][high fence]
	streamBytes      int // logical bytes of all items
	header           int // physical bytes before the stream (cacheline aligned)
	leafBytes        int // physical bytes of a leaf, cacheline aligned
	buckets          int // vacancy bitmap bits
}

func newGeometry(keySize, valSize, span, nbr int) (geometry, error) {
	g := geometry{keySize: keySize, valSize: valSize, span: span, nbr: nbr}
	if nbr < 2 || nbr > span {
		return g, fmt.Errorf("neighbourhood %d with span %d: need 2 <= neighbourhood <= span", nbr, span)
	}
	g.groups = (span + nbr - 1) / nbr
	g.entry = 1 + keySize + valSize
	g.meta = 2 + 8 + keySize
	g.streamBytes = span*g.entry + g.groups*g.meta
	g.header = roundUp(offLowFence+keySize, lineBytes)
	g.leafBytes = roundUp(g.pos(g.streamBytes), lineBytes)
	g.buckets = min(span, maxVacancy)
	return g, nil
}

func roundUp(x, a int) int { return (x + a - 1) / a * a }

// pos is the physical offset within the leaf where logical stream byte l
// starts its item. When l opens a cacheline the item owns that line's
// version byte, so the item begins on the version byte.
func (g *geometry) pos(l int) int {
	line, r := l/linePayload, l%linePayload
	if r == 0 {
		return g.header + line*lineBytes
	}
	return g.header + line*lineBytes + 1 + r
}

// slotOff is the logical offset of slot s; metaOff that of the replica
// after group k.
func (g *geometry) slotOff(s int) int { return s*g.entry + s/g.nbr*g.meta }
func (g *geometry) metaOff(k int) int {
	return min((k+1)*g.nbr, g.span)*g.entry + k*g.meta
}

// groupEnd reports whether slot s is the last of its group, so that a read
// ending at s must take the replica that follows.
func (g *geometry) groupEnd(s int) bool { return s%g.nbr == g.nbr-1 || s == g.span-1 }

// segment is one READ of a ring of slots: physical [lo, hi) of the leaf.
type segment struct{ lo, hi int }

// segments lists the READs covering slots first..first+n-1 (mod span) and
// the replica after the last of them when it ends a group: one READ, or
// two when the slots wrap past the leaf's end, in ring order.
func (g *geometry) segments(first, n int) []segment {
	if n >= g.span {
		return []segment{{g.pos(0), g.pos(g.streamBytes)}}
	}
	last := (first + n - 1) % g.span
	end := func(s int) int {
		if g.groupEnd(s) {
			return g.pos(g.metaOff(s/g.nbr) + g.meta)
		}
		return g.pos(g.slotOff(s + 1))
	}
	if first+n <= g.span {
		return []segment{{g.pos(g.slotOff(first)), end(last)}}
	}
	return []segment{
		{g.pos(g.slotOff(first)), g.pos(g.streamBytes)},
		{g.pos(0), end(last)},
	}
}

// home is the hopscotch home slot of key: FNV-1a, so placement is the same
// on every run and every machine, finished with MurmurHash3's fmix64
// because FNV-1a alone maps keys differing in their last byte to distinct
// low bits, which would make neighbouring keys never collide.
func (g *geometry) home(key []byte) int {
	f := fnv.New64a()
	f.Write(key)
	h := f.Sum64()
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return int(h % uint64(g.span))
}

// bucket is the vacancy bit of slot s; bucketSlots the slots of bit b.
func (g *geometry) bucket(s int) int { return s * g.buckets / g.span }
func (g *geometry) bucketSlots(b int) (lo, hi int) {
	return (b*g.span + g.buckets - 1) / g.buckets, ((b+1)*g.span + g.buckets - 1) / g.buckets
}

// image is a physical copy of a byte range of one leaf: base is the leaf
// offset of buf[0]. Reads fill images; writes are cut from them.
type image struct {
	base int
	buf  []byte
}

func (im *image) covers(lo, hi int) bool { return lo >= im.base && hi <= im.base+len(im.buf) }

// item is a decoded item: its header byte and its logical bytes after it.
type item struct {
	hdr  byte
	body []byte
}

// decode extracts the item at logical [off, off+n) from im into out (n
// bytes), dropping the cacheline version bytes; the item aliases out. ok
// is false when the item is torn: a version byte it owns disagrees with
// its header (a WRITE landed half-way).
func (g *geometry) decode(im *image, off, n int, out []byte) (it item, ok bool) {
	out = out[:n]
	for l := off; l < off+n; {
		line := l / linePayload
		stop := min(off+n, (line+1)*linePayload)
		p := g.header + line*lineBytes + 1 + l%linePayload - im.base
		copy(out[l-off:], im.buf[p:p+stop-l])
		l = stop
	}
	hdr := out[0]
	for line := (off + linePayload - 1) / linePayload; line*linePayload < off+n; line++ {
		if im.buf[g.header+line*lineBytes-im.base]&versionMask != hdr&versionMask {
			return item{}, false
		}
	}
	return item{hdr: hdr, body: out[1:]}, true
}

// encode writes an item (header byte hdr, then body) at logical offset off
// into im, stamping the version bytes the item owns.
func (g *geometry) encode(im *image, off int, hdr byte, body []byte) {
	n := 1 + len(body)
	for i := range n {
		l := off + i
		b := hdr
		if i > 0 {
			b = body[i-1]
		}
		im.buf[g.header+l/linePayload*lineBytes+1+l%linePayload-im.base] = b
	}
	for line := (off + linePayload - 1) / linePayload; line*linePayload < off+n; line++ {
		im.buf[g.header+line*lineBytes-im.base] = hdr & versionMask
	}
}

// entry is a decoded leaf slot.
type entry struct {
	hdr      byte
	key, val []byte
}

func (e *entry) occupied() bool { return e.hdr&occupiedBit != 0 }

// slotItem decodes slot s from im into buf (g.entry bytes), which the
// entry's key and value then alias.
func (g *geometry) slotItem(im *image, s int, buf []byte) (entry, bool) {
	it, ok := g.decode(im, g.slotOff(s), g.entry, buf)
	if !ok {
		return entry{}, false
	}
	return entry{hdr: it.hdr, key: it.body[:g.keySize], val: it.body[g.keySize:]}, true
}

func (g *geometry) putSlot(im *image, s int, e entry) {
	body := make([]byte, g.keySize+g.valSize)
	copy(body, e.key)
	copy(body[g.keySize:], e.val)
	g.encode(im, g.slotOff(s), e.hdr, body)
}

// slotRange is the physical range one slot's WRITE covers.
func (g *geometry) slotRange(s int) (lo, hi int) {
	return g.pos(g.slotOff(s)), g.pos(g.slotOff(s) + g.entry)
}

// rightMeta is a leaf's replicated right metadata.
type rightMeta struct {
	hdr      byte
	infinite bool // high fence is +inf
	sibling  transport.GAddr
	high     []byte
}

// metaItem decodes replica k from im into buf (g.meta bytes), which the
// high fence then aliases.
func (g *geometry) metaItem(im *image, k int, buf []byte) (rightMeta, bool) {
	it, ok := g.decode(im, g.metaOff(k), g.meta, buf)
	if !ok {
		return rightMeta{}, false
	}
	return rightMeta{
		hdr:      it.hdr,
		infinite: it.body[0]&flagInfinite != 0,
		sibling:  transport.GAddr(binary.LittleEndian.Uint64(it.body[1:9])),
		high:     it.body[9 : 9+g.keySize],
	}, true
}

func (g *geometry) putMeta(im *image, k int, m rightMeta) {
	body := make([]byte, g.meta-1)
	if m.infinite {
		body[0] = flagInfinite
	}
	binary.LittleEndian.PutUint64(body[1:9], uint64(m.sibling))
	copy(body[9:], m.high)
	g.encode(im, g.metaOff(k), m.hdr, body)
}

// bumpEntry returns hdr with its entry version advanced and the occupied
// bit set as given: every rewrite of a slot changes its version, so a
// reader that sees old and new bytes of it detects the tear.
func bumpEntry(hdr byte, occupied bool) byte {
	h := hdr&nodeVerMask | (hdr+1)&entryVerMask
	if occupied {
		h |= occupiedBit
	}
	return h
}

func nodeVersion(hdr byte) byte { return hdr & nodeVerMask >> nodeVerShift }
