package sherman

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// Node layout (doc.go draws it). Every node starts with the same packed
// header so that a node can be read before its kind is known, as Sherman's
// LeafPage and InternalPage share theirs.
const (
	offCRC      = 0  // 8 B: CRC-32C of bytes [8, size) (crc variant)
	offFront    = 8  // 1 B: node front version
	offLevel    = 9  // 1 B: level (bits 0-6), bit 7 set when the high fence is +inf
	offCount    = 10 // 2 B: keys in an internal node
	offLeftmost = 12 // 8 B: an internal node's child for keys below its first key
	offSibling  = 20 // 8 B: right sibling at the same level
	offLow      = 28 // K B: low fence (inclusive)
	// the high fence (exclusive, K B) follows the low fence

	unboundedBit = 0x80
	levelMask    = 0x7f

	// leaf entry: [front version byte][key][value][rear version byte]; the
	// low nibble of each version byte is the 4-bit entry version and bit 4
	// of the front byte marks a live entry.
	entryVersionMask = 0x0f
	entryValidBit    = 0x10
)

// layout is the geometry of the nodes of one index: key and value sizes
// fix the header and entry sizes, node sizes fix the fanouts.
type layout struct {
	keySize, valSize      int
	leafBytes, innerBytes int
	hdr                   int // header bytes, entries start here
	leafEntry, innerEntry int
	leafCard, innerCard   int // entries per leaf, keys per internal node
}

func newLayout(keySize, valSize, innerBytes, span int) (layout, error) {
	l := layout{keySize: keySize, valSize: valSize, innerBytes: innerBytes}
	l.hdr = offLow + 2*keySize
	l.leafEntry = keySize + valSize + 2
	l.innerEntry = keySize + 8
	l.innerCard = (innerBytes - l.hdr - 1) / l.innerEntry
	if span > 0 {
		l.leafCard = span
		l.leafBytes = l.hdr + span*l.leafEntry + 1
	} else {
		l.leafBytes = innerBytes
		l.leafCard = (innerBytes - l.hdr - 1) / l.leafEntry
	}
	// A split needs two keys on each side to leave both halves non-empty
	// and an internal node at least one separator.
	if l.innerCard < 4 || l.leafCard < 4 {
		return l, fmt.Errorf("nodes of %d bytes hold %d keys per internal node and %d entries per leaf with %d-byte keys and %d-byte values: need at least 4 of each",
			innerBytes, l.innerCard, l.leafCard, keySize, valSize)
	}
	return l, nil
}

// Header accessors on a node image.

func level(b []byte) int       { return int(b[offLevel] & levelMask) }
func unbounded(b []byte) bool  { return b[offLevel]&unboundedBit != 0 }
func count(b []byte) int       { return int(binary.LittleEndian.Uint16(b[offCount:])) }
func setCount(b []byte, n int) { binary.LittleEndian.PutUint16(b[offCount:], uint16(n)) }
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
func (l *layout) high(b []byte) []byte { return b[offLow+l.keySize : l.hdr] }

// initNode clears b and writes a header: level, fences (high nil means
// +inf) and sibling.
func (l *layout) initNode(b []byte, lvl int, low, high []byte, sib transport.GAddr) {
	clear(b)
	b[offLevel] = byte(lvl)
	copy(l.low(b), low)
	l.setHigh(b, high)
	setSibling(b, sib)
}

// setHigh sets the high fence; nil means +inf.
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
// root does (nodes never merge, so the only node of a level that covers
// everything is the top one).
func (l *layout) coversAll(b []byte) bool {
	return unbounded(b) && isZero(l.low(b))
}

func isZero(k []byte) bool {
	for _, c := range k {
		if c != 0 {
			return false
		}
	}
	return true
}

// Node-level versions and checksum.

// setConsistent bumps the node's front and rear versions together, as
// Sherman's set_consistent does before every whole-node WRITE, and
// refreshes the checksum.
func (l *layout) setConsistent(b []byte) {
	b[offFront]++
	b[len(b)-1] = b[offFront]
	l.sealCRC(b)
}

// versionsMatch is the node-level half of Sherman's two-level check.
func versionsMatch(b []byte) bool { return b[offFront] == b[len(b)-1] }

// sealCRC stores the checksum of the node (everything after the CRC word).
func (l *layout) sealCRC(b []byte) {
	binary.LittleEndian.PutUint64(b[offCRC:], cost.CRC(b[offCRC+8:]))
}

func crcMatches(b []byte) bool {
	return binary.LittleEndian.Uint64(b[offCRC:]) == cost.CRC(b[offCRC+8:])
}

// Leaf entries.

func (l *layout) entry(b []byte, i int) []byte {
	o := l.hdr + i*l.leafEntry
	return b[o : o+l.leafEntry]
}

func (l *layout) entryOffset(i int) uint64 { return uint64(l.hdr + i*l.leafEntry) }

func entryValid(e []byte) bool             { return e[0]&entryValidBit != 0 }
func (l *layout) entryKey(e []byte) []byte { return e[1 : 1+l.keySize] }
func (l *layout) entryVal(e []byte) []byte { return e[1+l.keySize : 1+l.keySize+l.valSize] }

// entryConsistent is the entry-level half of the two-level check: the
// 4-bit front and rear versions agree.
func entryConsistent(e []byte) bool {
	return e[0]&entryVersionMask == e[len(e)-1]&entryVersionMask
}

// writeEntry fills entry e in place and bumps its 4-bit versions, as
// Sherman's leaf_page_store does before writing the entry alone; val nil
// clears the entry (a delete).
func (l *layout) writeEntry(e []byte, key, val []byte) {
	v := (e[0] + 1) & entryVersionMask
	copy(l.entryKey(e), key)
	if val == nil {
		clear(l.entryVal(e))
		e[0] = v
	} else {
		copy(l.entryVal(e), val)
		e[0] = v | entryValidBit
	}
	e[len(e)-1] = v
}

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
	r := keyRange{known: true}
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
// or repoints key if it is there already. It must hold fewer than
// innerCard keys: a node that reaches innerCard is split at once, so at
// rest every internal node has room for one more.
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
