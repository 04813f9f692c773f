package rftree

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/dmbench/dmbench/indexes/internal/inner"
	"github.com/dmbench/dmbench/transport"
)

// Node layout (doc.go draws it). Data nodes and internal nodes share the
// header, so that a node can be read before its kind is known.
const (
	offCRC     = 0  // 4 B: CRC32-C of a data node (0 in internal nodes)
	offCount   = 4  // 2 B: entries of a data node, keys of an internal node
	offLevel   = 6  // 1 B: 0 = data node
	offFlags   = 7  // 1 B: flagUnbounded, flagDeleted
	offSibling = 8  // 8 B: right sibling; a deleted data node: the node it merged into
	offLow     = 16 // K B: low fence (inclusive), then the high fence (exclusive, K B)

	flagUnbounded = 0x01 // the high fence is +inf
	flagDeleted   = 0x02 // a data node merged into its left neighbour

	lockBytes = 8 // the lock word: the last 8 bytes of every node
)

// The lock word, the last 8 bytes of a node: [version:48][holder:16]. The
// holder is the tag of the thread holding the lock (0: free); every write
// back of a node increments the version, so that a writer's CAS from the
// version it READ fails if another writer got in between.
const (
	holderBits = 16
	holderMask = 1<<holderBits - 1
)

func lockVersion(w uint64) uint64 { return w >> holderBits }
func lockHolder(w uint64) uint64  { return w & holderMask }
func lockWordOf(version, holder uint64) uint64 {
	return version<<holderBits | holder&holderMask
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// layout is the geometry of one index's nodes.
type layout struct {
	keySize, valSize int
	nodeBytes        int
	hdr              int // header bytes: entries start here
	leafEntry        int // K + V
	innerEntry       int // 8 + K: [child][key]
	leafCard         int // entries per data node
	innerCard        int // keys per internal node
}

func newLayout(keySize, valSize, nodeBytes int) (layout, error) {
	l := layout{keySize: keySize, valSize: valSize, nodeBytes: nodeBytes}
	if nodeBytes%transport.CachelineBytes != 0 {
		return l, fmt.Errorf("node_bytes %d is not a multiple of %d (nodes are cacheline aligned)", nodeBytes, transport.CachelineBytes)
	}
	l.hdr = offLow + 2*keySize
	l.leafEntry = keySize + valSize
	l.innerEntry = 8 + keySize
	l.leafCard = (nodeBytes - l.hdr - lockBytes) / l.leafEntry
	l.innerCard = (nodeBytes - l.hdr - 8 - lockBytes) / l.innerEntry
	if l.innerCard < 4 || l.leafCard < 4 {
		return l, fmt.Errorf("nodes of %d bytes hold %d keys per internal node and %d entries per data node with %d-byte keys and %d-byte values: need at least 4 of each",
			nodeBytes, l.innerCard, l.leafCard, keySize, valSize)
	}
	return l, nil
}

// Header accessors on a node image.

func count(b []byte) int       { return int(binary.LittleEndian.Uint16(b[offCount:])) }
func setCount(b []byte, n int) { binary.LittleEndian.PutUint16(b[offCount:], uint16(n)) }
func level(b []byte) int       { return int(b[offLevel]) }
func unbounded(b []byte) bool  { return b[offFlags]&flagUnbounded != 0 }
func deleted(b []byte) bool    { return b[offFlags]&flagDeleted != 0 }
func sibling(b []byte) transport.GAddr {
	return transport.GAddr(binary.LittleEndian.Uint64(b[offSibling:]))
}
func setSibling(b []byte, a transport.GAddr) {
	binary.LittleEndian.PutUint64(b[offSibling:], uint64(a))
}

func (l *layout) low(b []byte) []byte  { return b[offLow : offLow+l.keySize] }
func (l *layout) high(b []byte) []byte { return b[offLow+l.keySize : l.hdr] }

// highOrNil is the high fence, nil when it is +inf.
func (l *layout) highOrNil(b []byte) []byte {
	if unbounded(b) {
		return nil
	}
	return l.high(b)
}

// lockWord reads the lock word of a node image.
func (l *layout) lockWord(b []byte) uint64 {
	return binary.LittleEndian.Uint64(b[l.nodeBytes-lockBytes:])
}

func (l *layout) setLockWord(b []byte, w uint64) {
	binary.LittleEndian.PutUint64(b[l.nodeBytes-lockBytes:], w)
}

// lockOffset is where a node's lock word lies.
func (l *layout) lockOffset() uint64 { return uint64(l.nodeBytes - lockBytes) }

// initNode clears b and writes a header: level, fences (high nil: +inf),
// sibling and an unlocked lock word of the given version.
func (l *layout) initNode(b []byte, lvl int, low, high []byte, sib transport.GAddr, version uint64) {
	clear(b)
	b[offLevel] = byte(lvl)
	copy(l.low(b), low)
	l.setHigh(b, high)
	setSibling(b, sib)
	l.setLockWord(b, lockWordOf(version, 0))
}

func (l *layout) setHigh(b []byte, high []byte) {
	if high == nil {
		b[offFlags] |= flagUnbounded
		clear(l.high(b))
		return
	}
	b[offFlags] &^= flagUnbounded
	copy(l.high(b), high)
}

// covers reports whether key lies in [low, high) of node b.
func (l *layout) covers(b []byte, key []byte) bool {
	return bytes.Compare(key, l.low(b)) >= 0 && (unbounded(b) || bytes.Compare(key, l.high(b)) < 0)
}

// coversAll reports whether node b spans the whole key space.
func (l *layout) coversAll(b []byte) bool { return unbounded(b) && inner.IsZero(l.low(b)) }

// The checksum of a data node covers its bytes between the CRC and the
// lock word and the version half of the lock word, never the holder: a
// lock CAS leaves the checksum valid, and an image whose bytes come from
// two different writes (a torn READ, or in strict memory mode a WRITE
// whose words landed out of order) fails it, the version included.
func (l *layout) checksum(b []byte) uint32 {
	c := crc32.Checksum(b[offCRC+4:l.nodeBytes-lockBytes], castagnoli)
	var v [8]byte
	binary.LittleEndian.PutUint64(v[:], lockVersion(l.lockWord(b)))
	return crc32.Update(c, castagnoli, v[:])
}

// checksumBytes is what one checksum reads, for the cost table.
func (l *layout) checksumBytes() int { return l.nodeBytes - offCRC - 4 }

func (l *layout) seal(b []byte) { binary.LittleEndian.PutUint32(b[offCRC:], l.checksum(b)) }

func (l *layout) crcMatches(b []byte) bool {
	return binary.LittleEndian.Uint32(b[offCRC:]) == l.checksum(b)
}

// Data node entries: count sorted (key, value) pairs from the header on.

func (l *layout) leafKey(b []byte, i int) []byte {
	o := l.hdr + i*l.leafEntry
	return b[o : o+l.keySize]
}

func (l *layout) leafVal(b []byte, i int) []byte {
	o := l.hdr + i*l.leafEntry + l.keySize
	return b[o : o+l.valSize]
}

// leafFind is the position of key in data node b: the first entry at or
// above it, and whether it is there.
func (l *layout) leafFind(b []byte, key []byte) (int, bool) {
	lo, hi := 0, min(count(b), l.leafCard)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if bytes.Compare(l.leafKey(b, m), key) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < min(count(b), l.leafCard) && bytes.Equal(l.leafKey(b, lo), key)
}

// leafInsertAt shifts entries i.. one to the right and puts (key, val) at
// i. The node must have room.
func (l *layout) leafInsertAt(b []byte, i int, key, val []byte) {
	n := count(b)
	o := l.hdr + i*l.leafEntry
	copy(b[o+l.leafEntry:l.hdr+(n+1)*l.leafEntry], b[o:l.hdr+n*l.leafEntry])
	copy(b[o:], key)
	copy(b[o+l.keySize:], val)
	setCount(b, n+1)
}

// leafRemoveAt shifts entries i+1.. one to the left and clears the last.
func (l *layout) leafRemoveAt(b []byte, i int) {
	n := count(b)
	o := l.hdr + i*l.leafEntry
	copy(b[o:], b[o+l.leafEntry:l.hdr+n*l.leafEntry])
	clear(b[l.hdr+(n-1)*l.leafEntry : l.hdr+n*l.leafEntry])
	setCount(b, n-1)
}

// Internal nodes: the leftmost child at the header end, then count
// entries [child 8 B][key K B] in key order: child i+1, stored just before
// key i, covers keys from key i on. A child is stored at a lower address
// than its key, so a WRITE landing in increasing address order puts a
// child in place before its key (section 3.3.3, Case 1).

func (l *layout) leftmostOffset() int { return l.hdr }

func (l *layout) innerEntryOffset(i int) int { return l.hdr + 8 + i*l.innerEntry }

func (l *layout) innerKey(b []byte, i int) []byte {
	o := l.innerEntryOffset(i) + 8
	return b[o : o+l.keySize]
}

// innerChild is child i: 0 the leftmost, i > 0 the one stored with key
// i-1.
func (l *layout) innerChild(b []byte, i int) transport.GAddr {
	o := l.leftmostOffset()
	if i > 0 {
		o = l.innerEntryOffset(i - 1)
	}
	return transport.GAddr(binary.LittleEndian.Uint64(b[o:]))
}

func (l *layout) setInnerChild(b []byte, i int, a transport.GAddr) {
	o := l.leftmostOffset()
	if i > 0 {
		o = l.innerEntryOffset(i - 1)
	}
	binary.LittleEndian.PutUint64(b[o:], uint64(a))
}

// innerIndex is the number of keys of internal node b at or below key.
func (l *layout) innerIndex(b []byte, key []byte) int {
	lo, hi := 0, min(count(b), l.innerCard)
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

// innerInsert puts (key, child) into internal node b in key order, or
// repoints key if it is there. The node must have room.
func (l *layout) innerInsert(b []byte, key []byte, child transport.GAddr) {
	n := count(b)
	i := l.innerIndex(b, key)
	if i > 0 && bytes.Equal(l.innerKey(b, i-1), key) {
		l.setInnerChild(b, i, child)
		return
	}
	o := l.innerEntryOffset(i)
	copy(b[o+l.innerEntry:l.innerEntryOffset(n+1)], b[o:l.innerEntryOffset(n)])
	binary.LittleEndian.PutUint64(b[o:], uint64(child))
	copy(b[o+8:], key)
	setCount(b, n+1)
}

// innerRemove removes entry i (key i and child i+1), shifting the rest
// left and clearing the freed slot.
func (l *layout) innerRemove(b []byte, i int) {
	n := count(b)
	o := l.innerEntryOffset(i)
	copy(b[o:], b[o+l.innerEntry:l.innerEntryOffset(n)])
	clear(b[l.innerEntryOffset(n-1):l.innerEntryOffset(n)])
	setCount(b, n-1)
}
