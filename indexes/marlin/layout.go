package marlin

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/dmbench/dmbench/transport"
)

// Node layout (doc.go draws it). Leaves and internal nodes share one
// packed header, as Sherman's pages do, so a node can be read before its
// kind is known. The first word is the node's embedded lock: the Spear
// in a leaf, Sherman's CAS lock in an internal node.
const (
	offLock     = 0  // 8 B: leaf Spear counter / internal node lock holder
	offFront    = 8  // 1 B: node front version
	offLevel    = 9  // 1 B: level (bits 0-6), bit 7 set when the high fence is +inf
	offCount    = 10 // 2 B: keys in an internal node
	offLeftmost = 12 // 8 B: an internal node's child for keys below its first key
	offSibling  = 20 // 8 B: right sibling at the same level
	offLow      = 28 // K B: low fence (inclusive), then the high fence (K B)

	unboundedBit = 0x80
	levelMask    = 0x7f

	// nodeAlign aligns nodes to cachelines, so that the lock word and
	// the front version share a node's first line.
	nodeAlign = transport.CachelineBytes
	// itemAlign keeps item pointers' low bits free for the slot flags.
	itemAlign = 8
)

// A leaf slot's pointer word: an item's address, or one of these.
const (
	slotFree      = 0 // never claimed since the leaf was last written whole
	slotTombstone = 1 // the key was deleted; the slot keeps its key
	pendingBit    = 2 // claimed by an insert whose key WRITE has not landed
)

// layout is the geometry of one index's nodes and items.
type layout struct {
	keySize, valSize      int
	hdr                   int // header bytes, 8-aligned: entries start here
	leafEntry, innerEntry int
	span                  int // entries per leaf and keys per internal node
	leafBytes, innerBytes int
	itemBytes             int
}

func newLayout(keySize, valSize, span int) (layout, error) {
	if span < 4 {
		return layout{}, fmt.Errorf("span %d: need at least 4 entries per node", span)
	}
	l := layout{keySize: keySize, valSize: valSize, span: span}
	l.hdr = align8(offLow + 2*keySize)
	l.leafEntry = 8 + align8(keySize)
	l.innerEntry = keySize + 8
	l.leafBytes = l.hdr + span*l.leafEntry + 1
	l.innerBytes = l.hdr + span*l.innerEntry + 1
	l.itemBytes = align8(8 + keySize + valSize)
	return l, nil
}

func align8(n int) int { return (n + 7) &^ 7 }

// Header accessors on a node image.

func level(b []byte) int       { return int(b[offLevel] & levelMask) }
func unbounded(b []byte) bool  { return b[offLevel]&unboundedBit != 0 }
func count(b []byte) int       { return int(binary.LittleEndian.Uint16(b[offCount:])) }
func setCount(b []byte, n int) { binary.LittleEndian.PutUint16(b[offCount:], uint16(n)) }
func lockWord(b []byte) uint64 { return binary.LittleEndian.Uint64(b[offLock:]) }
func sibling(b []byte) transport.GAddr {
	return transport.GAddr(binary.LittleEndian.Uint64(b[offSibling:]))
}
func setSibling(b []byte, a transport.GAddr) {
	binary.LittleEndian.PutUint64(b[offSibling:], uint64(a))
}
func leftmost(b []byte) transport.GAddr {
	return transport.GAddr(binary.LittleEndian.Uint64(b[offLeftmost:]))
}

func (l *layout) low(b []byte) []byte  { return b[offLow : offLow+l.keySize] }
func (l *layout) high(b []byte) []byte { return b[offLow+l.keySize : offLow+2*l.keySize] }

// initNode clears b and writes a header: level, fences (high nil means
// +inf) and sibling.
func (l *layout) initNode(b []byte, lvl int, low, high []byte, sib transport.GAddr) {
	clear(b)
	b[offLevel] = byte(lvl)
	copy(l.low(b), low)
	l.setHigh(b, high)
	setSibling(b, sib)
}

func (l *layout) setHigh(b []byte, high []byte) {
	if high == nil {
		b[offLevel] |= unboundedBit
		clear(l.high(b))
		return
	}
	b[offLevel] &^= unboundedBit
	copy(l.high(b), high)
}

// highOrNil returns the high fence, nil when it is +inf.
func (l *layout) highOrNil(b []byte) []byte {
	if unbounded(b) {
		return nil
	}
	return l.high(b)
}

// covers reports whether key lies in [low, high) of node b.
func (l *layout) covers(b []byte, key []byte) bool {
	return bytes.Compare(key, l.low(b)) >= 0 && (unbounded(b) || bytes.Compare(key, l.high(b)) < 0)
}

// coversAll reports whether node b spans the whole key space: only the
// root does, since nodes never merge.
func (l *layout) coversAll(b []byte) bool { return unbounded(b) && isZero(l.low(b)) }

func isZero(k []byte) bool {
	for _, c := range k {
		if c != 0 {
			return false
		}
	}
	return true
}

// setConsistent bumps the node's front and rear versions together before
// a whole-node WRITE, as Sherman's set_consistent.
func setConsistent(b []byte) {
	b[offFront]++
	b[len(b)-1] = b[offFront]
}

// consistent is a reader's check of a node image: no structure change was
// writing it (a leaf's Spear is not negative, an internal node is not
// locked) and its front and rear versions agree. The lock word is part of
// the image, so on a fabric whose READ is one snapshot the first test
// alone rules out a torn node; the versions cover READs that copy
// word by word in address order while a WRITE does the same.
func consistent(b []byte) bool {
	w := lockWord(b)
	if level(b) == 0 {
		if int64(w) < 0 {
			return false
		}
	} else if w != 0 {
		return false
	}
	return b[offFront] == b[len(b)-1]
}

// Leaf slots: [item pointer 8][key K, padded to 8]. The pointer comes
// first so that a reader copying in address order that sees a final
// pointer sees the key its inserter wrote before it.

func (l *layout) slotOffset(i int) uint64 { return uint64(l.hdr + i*l.leafEntry) }

func (l *layout) slotPtr(b []byte, i int) uint64 {
	return binary.LittleEndian.Uint64(b[l.slotOffset(i):])
}

func (l *layout) setSlotPtr(b []byte, i int, p uint64) {
	binary.LittleEndian.PutUint64(b[l.slotOffset(i):], p)
}

func (l *layout) slotKey(b []byte, i int) []byte {
	o := int(l.slotOffset(i)) + 8
	return b[o : o+l.keySize]
}

// isItem reports whether a pointer word names a final item (live).
func isItem(p uint64) bool { return p != slotFree && p != slotTombstone && p&pendingBit == 0 }

// keyed reports whether a slot's key field is final: its pointer is an
// item or a tombstone (a pending slot's key may not have landed).
func keyed(p uint64) bool { return p != slotFree && p&pendingBit == 0 }

// Internal nodes: keys sorted, children[0] is the leftmost pointer and
// children[i+1] follows key i.

func (l *layout) innerKey(b []byte, i int) []byte {
	o := l.hdr + i*l.innerEntry
	return b[o : o+l.keySize]
}

func (l *layout) innerChild(b []byte, i int) transport.GAddr {
	if i == 0 {
		return leftmost(b)
	}
	o := l.hdr + (i-1)*l.innerEntry + l.keySize
	return transport.GAddr(binary.LittleEndian.Uint64(b[o:]))
}

func (l *layout) setInnerChild(b []byte, i int, a transport.GAddr) {
	if i == 0 {
		binary.LittleEndian.PutUint64(b[offLeftmost:], uint64(a))
		return
	}
	o := l.hdr + (i-1)*l.innerEntry + l.keySize
	binary.LittleEndian.PutUint64(b[o:], uint64(a))
}

// childIndex is the child of internal node b that covers key: the number
// of keys at or below key.
func (l *layout) childIndex(b []byte, key []byte) int {
	lo, hi := 0, count(b)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if bytes.Compare(l.innerKey(b, m), key) <= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// childRange is the key range internal node b assigns to child i.
func (l *layout) childRange(b []byte, i int) keyRange {
	var r keyRange
	if i == 0 {
		r.lo = l.low(b)
	} else {
		r.lo = l.innerKey(b, i-1)
	}
	if i < count(b) {
		r.hi = l.innerKey(b, i)
	} else {
		r.hi = l.highOrNil(b)
	}
	return r
}

// insertInner puts (key, child) into internal node b at its sorted place,
// or repoints key if it is there already. b holds fewer than span keys.
func (l *layout) insertInner(b []byte, key []byte, child transport.GAddr) {
	n := count(b)
	i := l.childIndex(b, key)
	if i > 0 && bytes.Equal(l.innerKey(b, i-1), key) {
		l.setInnerChild(b, i, child)
		return
	}
	o := l.hdr + i*l.innerEntry
	copy(b[o+l.innerEntry:l.hdr+(n+1)*l.innerEntry], b[o:l.hdr+n*l.innerEntry])
	copy(b[o:], key)
	setCount(b, n+1)
	l.setInnerChild(b, i+1, child)
}

// keyRange is a key range [lo, hi); hi nil means +inf.
type keyRange struct{ lo, hi []byte }

// Data items: [size word 8][key K][value V], padded to 8. The size word
// holds the key and value sizes (Marlin's data blocks carry their length
// for variable-sized values); the key makes an item self-describing, so
// that an insert can tell which key a slot it lost a race for belongs to.

func (l *layout) itemWord() uint64 { return uint64(l.keySize) | uint64(l.valSize)<<16 }

func (l *layout) fillItem(b, key, val []byte) {
	binary.LittleEndian.PutUint64(b, l.itemWord())
	copy(b[8:], key)
	copy(b[8+l.keySize:], val)
}

func (l *layout) itemKey(b []byte) []byte { return b[8 : 8+l.keySize] }
func (l *layout) itemVal(b []byte) []byte {
	return b[8+l.keySize : 8+l.keySize+l.valSize]
}

// itemValid checks an item image's size word.
func (l *layout) itemValid(b []byte) bool { return binary.LittleEndian.Uint64(b) == l.itemWord() }
