package dolphin

import (
	"encoding/binary"
	"fmt"

	"github.com/dmbench/dmbench/transport"
)

// Slot words. An internal node's slot is one 8-byte word changed only by
// CAS, so that a child is published atomically (SMART's packed slots):
//
//	bits  0-39  offset of the child on its memory node
//	bits 40-51  the child's memory node
//	bits 52-59  the key byte the slot stands for (a special node: the
//	            leaf's lowest last byte)
//	bits 60-61  the child's node type when it is an internal node
//	bits 62-63  kind: 0 empty, 1 leaf, 2 internal node
const (
	slotOffsetBits = 40
	slotNodeBits   = 12
	kindEmpty      = 0
	kindLeaf       = 1
	kindInner      = 2
)

type slot uint64

func makeSlot(kind int, typ nodeType, b byte, a transport.GAddr) (slot, error) {
	if a.Offset() >= 1<<slotOffsetBits || int(a.Node()) >= 1<<slotNodeBits {
		return 0, fmt.Errorf("address %v does not fit a slot word (node < %d, offset < 2^%d)", a, 1<<slotNodeBits, slotOffsetBits)
	}
	return slot(uint64(kind)<<62 | uint64(typ)<<60 | uint64(b)<<52 | uint64(a.Node())<<slotOffsetBits | a.Offset()), nil
}

func (s slot) kind() int     { return int(s >> 62) }
func (s slot) typ() nodeType { return nodeType(s >> 60 & 3) }
func (s slot) key() byte     { return byte(s >> 52) }
func (s slot) empty() bool   { return s == 0 }
func (s slot) leaf() bool    { return s.kind() == kindLeaf }
func (s slot) addr() transport.GAddr {
	return transport.Addr(transport.NodeID(s>>slotOffsetBits&(1<<slotNodeBits-1)), uint64(s)&(1<<slotOffsetBits-1))
}

// nodeType is an ART node's capacity class: Node4, Node16, Node48 and
// Node256 as in the ART paper and SMART. The first three fill their slots
// in order; Node256 is indexed by the key byte.
type nodeType uint8

const (
	node4 nodeType = iota
	node16
	node48
	node256
)

var nodeCaps = [4]int{4, 16, 48, 256}

func (t nodeType) capacity() int { return nodeCaps[t] }

// Internal node layout (all words little-endian):
//
//	[0, 8)        header: depth (bits 0-7), partial length (8-15), node
//	              type (16-17), obsolete (63); changed only by CAS
//	[8, 8+P)      partial key: the key bytes between the parent's depth
//	              and this node's, P = K-1 rounded up to 8
//	[8+P, +8n)    n slots
//
// The depth is the index of the key byte the node dispatches on; a
// "special" node has depth K-1 and points to leaves by range.
const obsoleteBit = 1 << 63

type header uint64

func makeHeader(depth, partialLen int, t nodeType) header {
	return header(uint64(depth) | uint64(partialLen)<<8 | uint64(t)<<16)
}

func (h header) depth() int      { return int(h & 0xff) }
func (h header) partialLen() int { return int(h >> 8 & 0xff) }
func (h header) typ() nodeType   { return nodeType(h >> 16 & 3) }
func (h header) obsolete() bool  { return h&obsoleteBit != 0 }

// Leaf key words: a key's state and its last byte. All keys of a leaf share
// the leaf's prefix (the key without its last byte), so the byte names the
// key; a word of 0 is an empty slot.
const (
	stateEmpty   = 0
	statePending = 1 // claimed by an insert whose value is not written yet
	stateLive    = 2
	stateDeleted = 3 // a tombstone, reclaimed by the leaf's next SMO
)

func keyWord(state int, b byte) uint64 { return uint64(state)<<56 | uint64(b) }
func wordState(w uint64) int           { return int(w >> 56) }
func wordByte(w uint64) byte           { return byte(w) }

// Spear, the ternary-state leaf lock (Marlin ICPP'23, Dolphin section
// III.C), changed only by FAA: every insert, update and delete adds 1 while
// it works on the leaf, an SMO adds -spearSMO and waits until the word is
// exactly -spearSMO (every IDU operation drained). A word below
// -spearThreshold means an SMO is running.
const (
	spearSMO       = 1_000_000
	spearThreshold = 100_000
)

func spearBusy(w uint64) bool { return int64(w) < -spearThreshold }

// layout is the geometry of nodes for one key and value size.
type layout struct {
	keySize, valueSize int
	partialCap         int // bytes of an internal node's partial key field
	prefixLen          int // K-1: the bytes a leaf's keys share

	// Leaf geometry.
	span      int // key slots per leaf
	keysOff   int
	valsOff   int
	valStride int
	valLines  int // cachelines per value when it has cacheline versions (> 64 B), else 0
	tailOff   int // rear version word, then the Spear word
	lockOff   int
	leafBytes int
}

// Leaf layout (K-byte keys, V-byte values, S slots):
//
//	[0, 8)          rev_ptr: a slot word naming the leaf's special parent
//	                (0 before the leaf's first split)
//	[8, 16)         front version (byte 8), lowest last byte lo (9), highest hi (10)
//	[16, 16+P)      prefix: the K-1 bytes every key of the leaf shares
//	keysOff         S key words (state, last byte)
//	valsOff         S values, 64-byte aligned, each a power of two up to 64
//	                bytes so it never straddles a cacheline; values over 64
//	                bytes take whole cachelines of 63 data bytes and a
//	                version byte each
//	tailOff         rear version word
//	lockOff         Spear word, the leaf's last word
//
// The leaf holds keys prefix|lo .. prefix|hi. Keys come before values so
// that a READ, which lands lines in increasing address order, never sees
// a live key word paired with a value older than it.
func newLayout(keySize, valueSize, leafBytes, span int) (layout, error) {
	if keySize < 2 || keySize > 200 {
		return layout{}, fmt.Errorf("key size %d: Dolphin needs keys of 2 to 200 bytes (a prefix and a last byte)", keySize)
	}
	if valueSize < 1 {
		return layout{}, fmt.Errorf("value size %d: need at least 1 byte", valueSize)
	}
	l := layout{keySize: keySize, valueSize: valueSize, prefixLen: keySize - 1}
	l.partialCap = roundUp(keySize-1, 8)
	l.keysOff = 16 + l.partialCap
	if valueSize <= transport.CachelineBytes {
		l.valStride = 8
		for l.valStride < valueSize {
			l.valStride *= 2
		}
	} else {
		l.valLines = (valueSize + transport.CachelineBytes - 2) / (transport.CachelineBytes - 1)
		l.valStride = l.valLines * transport.CachelineBytes
	}
	size := func(s int) int {
		vals := roundUp(l.keysOff+8*s, transport.CachelineBytes)
		return roundUp(vals+s*l.valStride, transport.CachelineBytes) + transport.CachelineBytes
	}
	if span == 0 {
		for span = 1; span < 256 && size(span+1) <= leafBytes; span++ {
		}
	}
	if span < 4 || span > 256 {
		return layout{}, fmt.Errorf("leaf span %d: need 4 to 256 keys per leaf", span)
	}
	l.span = span
	l.valsOff = roundUp(l.keysOff+8*span, transport.CachelineBytes)
	l.tailOff = roundUp(l.valsOff+span*l.valStride, transport.CachelineBytes)
	l.lockOff = l.tailOff + 8
	l.leafBytes = l.tailOff + transport.CachelineBytes
	return l, nil
}

func roundUp(n, a int) int { return (n + a - 1) / a * a }

func (l *layout) innerBytes(t nodeType) int { return 8 + l.partialCap + 8*t.capacity() }
func (l *layout) slotsOff() int             { return 8 + l.partialCap }

// leafImage wraps a leaf's bytes as read or to be written.
type leafImage []byte

func (l *layout) revPtr(img leafImage) slot {
	return slot(binary.LittleEndian.Uint64(img))
}
func (l *layout) frontVersion(img leafImage) byte { return img[8] }
func (l *layout) lo(img leafImage) byte           { return img[9] }
func (l *layout) hi(img leafImage) byte           { return img[10] }
func (l *layout) prefix(img leafImage) []byte     { return img[16 : 16+l.prefixLen] }
func (l *layout) keyWordAt(img leafImage, i int) uint64 {
	return binary.LittleEndian.Uint64(img[l.keysOff+8*i:])
}
func (l *layout) rearVersion(img leafImage) byte { return img[l.tailOff] }
func (l *layout) spear(img leafImage) uint64 {
	return binary.LittleEndian.Uint64(img[l.lockOff:])
}

// consistent reports whether a whole-leaf image is one version of the
// leaf: no SMO ran during the READ (Spear not held by an SMO, front and
// rear versions equal).
func (l *layout) consistent(img leafImage) bool {
	return !spearBusy(l.spear(img)) && l.frontVersion(img) == l.rearVersion(img)
}

// initLeaf formats img as a leaf of prefix holding [lo, hi], versions v.
func (l *layout) initLeaf(img leafImage, rev slot, prefix []byte, lo, hi, v byte) {
	clear(img)
	binary.LittleEndian.PutUint64(img, uint64(rev))
	img[8], img[9], img[10] = v, lo, hi
	copy(img[16:], prefix[:l.prefixLen])
	img[l.tailOff] = v
}

func (l *layout) setKeyWord(img leafImage, i int, w uint64) {
	binary.LittleEndian.PutUint64(img[l.keysOff+8*i:], w)
}

// valueAt returns slot i's value from a leaf image, or false when a value
// with cacheline versions was read torn.
func (l *layout) valueAt(img leafImage, i int) ([]byte, bool) {
	v := img[l.valsOff+i*l.valStride:]
	if l.valLines == 0 {
		return append([]byte(nil), v[:l.valueSize]...), true
	}
	out := make([]byte, 0, l.valueSize)
	ver := v[0]
	for line := range l.valLines {
		b := v[line*transport.CachelineBytes:]
		if b[0] != ver {
			return nil, false
		}
		out = append(out, b[1:min(transport.CachelineBytes, 1+l.valueSize-len(out))]...)
	}
	return out, true
}

// valueVersion is the version byte of slot i's value (0 without versions).
func (l *layout) valueVersion(img leafImage, i int) byte {
	if l.valLines == 0 {
		return 0
	}
	return img[l.valsOff+i*l.valStride]
}

// encodeValue formats val for slot storage with version ver.
func (l *layout) encodeValue(dst []byte, val []byte, ver byte) []byte {
	if l.valLines == 0 {
		return append(dst[:0], val...)
	}
	dst = dst[:0]
	for line := range l.valLines {
		chunk := val[min(len(val), line*(transport.CachelineBytes-1)):min(len(val), (line+1)*(transport.CachelineBytes-1))]
		dst = append(dst, ver)
		dst = append(dst, chunk...)
		for len(dst)%transport.CachelineBytes != 0 {
			dst = append(dst, 0)
		}
	}
	return dst
}

// putValue stores val into slot i of img (versions ver).
func (l *layout) putValue(img leafImage, i int, val []byte, ver byte) {
	off := l.valsOff + i*l.valStride
	enc := l.encodeValue(make([]byte, 0, l.valStride), val, ver)
	copy(img[off:off+l.valStride], enc)
}

// valueAddr is the address of slot i's value in the leaf at a.
func (l *layout) valueAddr(a transport.GAddr, i int) transport.GAddr {
	return a.Add(uint64(l.valsOff + i*l.valStride))
}
func (l *layout) keyAddr(a transport.GAddr, i int) transport.GAddr {
	return a.Add(uint64(l.keysOff + 8*i))
}
func (l *layout) lockAddr(a transport.GAddr) transport.GAddr { return a.Add(uint64(l.lockOff)) }

// prefixOf is the prefix of key (all bytes but the last).
func (l *layout) prefixOf(key []byte) []byte { return key[:l.prefixLen] }
