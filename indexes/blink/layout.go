package blink

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/dmbench/dmbench/transport"
)

// Node layout (doc.go draws it). Leaves and internal nodes share the
// header, so a node can be checked before its kind is known.
const (
	offCRC     = 0  // 4 B: CRC32 of bytes [4, size), rear word unlocked
	offLevel   = 4  // 1 B: 0 = leaf
	offFlags   = 5  // 1 B: flagUnbounded
	offCount   = 6  // 2 B: entries of a leaf, keys of an internal node
	offFront   = 8  // 8 B: front version
	offSibling = 16 // 8 B: right sibling at the same level (0 = none)
	offLow     = 24 // K B: low fence (inclusive); the high fence follows

	rearBytes = 8 // the rear word: version << 1 | lock bit
	lockBit   = 1

	flagUnbounded = 1 // the high fence is +inf
)

// layout is the geometry of one index's nodes.
type layout struct {
	keySize, valSize int
	size             int // bytes per node
	hdr              int // header bytes; entries start here
	leafEntry        int // K + V
	innerEntry       int // K + 8
	leafCard         int // entries per leaf
	innerCard        int // keys per internal node (children: one more)
}

func newLayout(keySize, valSize, size int) (layout, error) {
	l := layout{keySize: keySize, valSize: valSize, size: size}
	l.hdr = offLow + 2*keySize
	l.leafEntry = keySize + valSize
	l.innerEntry = keySize + 8
	l.leafCard = (size - l.hdr - rearBytes) / l.leafEntry
	l.innerCard = (size - l.hdr - 8 - rearBytes) / l.innerEntry
	// A split leaves at least two entries on each side.
	if l.leafCard < 4 || l.innerCard < 4 {
		return l, fmt.Errorf("nodes of %d bytes hold %d entries per leaf and %d keys per internal node with %d-byte keys and %d-byte values: need at least 4 of each",
			size, l.leafCard, l.innerCard, keySize, valSize)
	}
	return l, nil
}

// Header accessors on a node image.

func level(b []byte) int       { return int(b[offLevel]) }
func unbounded(b []byte) bool  { return b[offFlags]&flagUnbounded != 0 }
func count(b []byte) int       { return int(binary.LittleEndian.Uint16(b[offCount:])) }
func setCount(b []byte, n int) { binary.LittleEndian.PutUint16(b[offCount:], uint16(n)) }
func front(b []byte) uint64    { return binary.LittleEndian.Uint64(b[offFront:]) }
func sibling(b []byte) transport.GAddr {
	return transport.GAddr(binary.LittleEndian.Uint64(b[offSibling:]))
}
func setSibling(b []byte, a transport.GAddr) {
	binary.LittleEndian.PutUint64(b[offSibling:], uint64(a))
}

// rear is the node's last word: its version and lock bit.
func rear(b []byte) uint64 { return binary.LittleEndian.Uint64(b[len(b)-rearBytes:]) }
func setRear(b []byte, w uint64) {
	binary.LittleEndian.PutUint64(b[len(b)-rearBytes:], w)
}

// version is the node's version as its rear word has it.
func version(b []byte) uint64 { return rear(b) >> 1 }
func locked(b []byte) bool    { return rear(b)&lockBit != 0 }

// unlockedWord is the rear word of version v with the lock free.
func unlockedWord(v uint64) uint64 { return v << 1 }

func (l *layout) rearOffset() uint64 { return uint64(l.size - rearBytes) }

func (l *layout) low(b []byte) []byte  { return b[offLow : offLow+l.keySize] }
func (l *layout) high(b []byte) []byte { return b[offLow+l.keySize : l.hdr] }

// initNode clears b and writes a header: level, fences (high nil means
// +inf) and sibling, at version 0.
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
		b[offFlags] |= flagUnbounded
		clear(l.high(b))
		return
	}
	b[offFlags] &^= flagUnbounded
	copy(l.high(b), high)
}

// highOrNil returns the high fence, nil when it is +inf.
func (l *layout) highOrNil(b []byte) []byte {
	if unbounded(b) {
		return nil
	}
	return l.high(b)
}

// beyond reports whether key lies at or past the node's high fence: a
// concurrent split moved it to a right sibling (B-link move right).
func (l *layout) beyond(b []byte, key []byte) bool {
	return !unbounded(b) && bytes.Compare(key, l.high(b)) >= 0
}

// below reports whether key lies under the node's low fence.
func (l *layout) below(b []byte, key []byte) bool { return bytes.Compare(key, l.low(b)) < 0 }

// Versions and checksum.

// checksum is the CRC32 of the node after its CRC field, with the lock bit
// of the rear word clear: a node locked by a writer that has not written
// yet still checks, since the lock changes nothing else.
func checksum(b []byte) uint32 {
	n := len(b) - rearBytes
	c := crc32.ChecksumIEEE(b[offCRC+4 : n])
	var w [rearBytes]byte
	binary.LittleEndian.PutUint64(w[:], rear(b)&^lockBit)
	return crc32.Update(c, crc32.IEEETable, w[:])
}

// consistent reports whether a READ image is one that a writer wrote
// whole: the front version equals the rear one and the CRC matches.
func consistent(b []byte) bool {
	return front(b) == version(b) && binary.LittleEndian.Uint32(b[offCRC:]) == checksum(b)
}

// seal gives the image version v at both ends, unlocked, and its CRC: the
// image a writer WRITEs whole.
func seal(b []byte, v uint64) {
	binary.LittleEndian.PutUint64(b[offFront:], v)
	setRear(b, unlockedWord(v))
	binary.LittleEndian.PutUint32(b[offCRC:], checksum(b))
}

// Leaf entries: sorted, key then value.

func (l *layout) leafKey(b []byte, i int) []byte {
	o := l.hdr + i*l.leafEntry
	return b[o : o+l.keySize]
}

func (l *layout) leafVal(b []byte, i int) []byte {
	o := l.hdr + i*l.leafEntry + l.keySize
	return b[o : o+l.valSize]
}

// leafSearch returns the first entry at or after key and whether it is key.
func (l *layout) leafSearch(b []byte, key []byte) (int, bool) {
	lo, hi := 0, count(b)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if bytes.Compare(l.leafKey(b, m), key) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < count(b) && bytes.Equal(l.leafKey(b, lo), key)
}

// leafInsertAt shifts entries i.. right by one and writes key and val at i.
func (l *layout) leafInsertAt(b []byte, i int, key, val []byte) {
	n := count(b)
	o := l.hdr + i*l.leafEntry
	copy(b[o+l.leafEntry:l.hdr+(n+1)*l.leafEntry], b[o:l.hdr+n*l.leafEntry])
	copy(b[o:], key)
	copy(b[o+l.keySize:o+l.leafEntry], val)
	setCount(b, n+1)
}

// leafRemoveAt shifts entries i+1.. left over entry i.
func (l *layout) leafRemoveAt(b []byte, i int) {
	n := count(b)
	o := l.hdr + i*l.leafEntry
	copy(b[o:], b[o+l.leafEntry:l.hdr+n*l.leafEntry])
	clear(b[l.hdr+(n-1)*l.leafEntry : l.hdr+n*l.leafEntry])
	setCount(b, n-1)
}

// Internal nodes: the leftmost child, then sorted (key, child) entries;
// child i+1 (the child of key i) holds keys from key i on.

func (l *layout) innerKey(b []byte, i int) []byte {
	o := l.hdr + 8 + i*l.innerEntry
	return b[o : o+l.keySize]
}

// innerChild returns child i: 0 is the leftmost, i > 0 the child of key i-1.
func (l *layout) innerChild(b []byte, i int) transport.GAddr {
	o := l.hdr
	if i > 0 {
		o = l.hdr + 8 + (i-1)*l.innerEntry + l.keySize
	}
	return transport.GAddr(binary.LittleEndian.Uint64(b[o:]))
}

func (l *layout) setInnerChild(b []byte, i int, a transport.GAddr) {
	o := l.hdr
	if i > 0 {
		o = l.hdr + 8 + (i-1)*l.innerEntry + l.keySize
	}
	binary.LittleEndian.PutUint64(b[o:], uint64(a))
}

// innerSearch returns the number of keys at or below key: the index of
// the child that covers key.
func (l *layout) innerSearch(b []byte, key []byte) int {
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

// innerInsert adds key with child a (covering keys from key on) in order.
// It reports false if key is there already.
func (l *layout) innerInsert(b []byte, key []byte, a transport.GAddr) bool {
	i := l.innerSearch(b, key)
	if i > 0 && bytes.Equal(l.innerKey(b, i-1), key) {
		return false
	}
	n := count(b)
	o := l.hdr + 8 + i*l.innerEntry
	copy(b[o+l.innerEntry:l.hdr+8+(n+1)*l.innerEntry], b[o:l.hdr+8+n*l.innerEntry])
	copy(b[o:], key)
	binary.LittleEndian.PutUint64(b[o+l.keySize:], uint64(a))
	setCount(b, n+1)
	return true
}
