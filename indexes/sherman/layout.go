package sherman

import (
	"encoding/binary"
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes/internal/inner"
)

// Node layout (doc.go draws it). Every node starts with the header of
// package inner, which Sherman's LeafPage and InternalPage share, so that
// a node can be read before its kind is known; its first word is the CRC.
const (
	offCRC = 0 // 8 B: CRC-32C of bytes [8, size) (crc variant)

	// leaf entry: [front version byte][key][value][rear version byte]; the
	// low nibble of each version byte is the 4-bit entry version and bit 4
	// of the front byte marks a live entry.
	entryVersionMask = 0x0f
	entryValidBit    = 0x10
)

// layout is the geometry of the nodes of one index: key and value sizes
// fix the header and entry sizes, node sizes fix the fanouts.
type layout struct {
	inner.Layout
	valSize   int
	leafBytes int
	leafEntry int
	leafCard  int // entries per leaf
}

func newLayout(keySize, valSize, innerBytes, span int) (layout, error) {
	hdr := inner.HeaderBytes(keySize)
	l := layout{Layout: inner.NewLayout(keySize, hdr, innerBytes, (innerBytes-hdr-1)/(keySize+8)), valSize: valSize}
	l.leafEntry = keySize + valSize + 2
	if span > 0 {
		l.leafCard = span
		l.leafBytes = hdr + span*l.leafEntry + 1
	} else {
		l.leafBytes = innerBytes
		l.leafCard = (innerBytes - hdr - 1) / l.leafEntry
	}
	// A split needs two keys on each side to leave both halves non-empty
	// and an internal node at least one separator.
	if l.InnerCard < 4 || l.leafCard < 4 {
		return l, fmt.Errorf("nodes of %d bytes hold %d keys per internal node and %d entries per leaf with %d-byte keys and %d-byte values: need at least 4 of each",
			innerBytes, l.InnerCard, l.leafCard, keySize, valSize)
	}
	return l, nil
}

// Node-level versions and checksum.

// setConsistent bumps the node's front and rear versions together, as
// Sherman's set_consistent does before every whole-node WRITE, and
// refreshes the checksum.
func (l *layout) setConsistent(b []byte) {
	inner.SetVersions(b)
	l.sealCRC(b)
}

// sealCRC stores the checksum of the node (everything after the CRC word).
func (l *layout) sealCRC(b []byte) {
	binary.LittleEndian.PutUint64(b[offCRC:], cost.CRC(b[offCRC+8:]))
}

func crcMatches(b []byte) bool {
	return binary.LittleEndian.Uint64(b[offCRC:]) == cost.CRC(b[offCRC+8:])
}

// Leaf entries.

func (l *layout) entry(b []byte, i int) []byte {
	o := l.Hdr + i*l.leafEntry
	return b[o : o+l.leafEntry]
}

func (l *layout) entryOffset(i int) uint64 { return uint64(l.Hdr + i*l.leafEntry) }

func entryValid(e []byte) bool             { return e[0]&entryValidBit != 0 }
func (l *layout) entryKey(e []byte) []byte { return e[1 : 1+l.KeySize] }
func (l *layout) entryVal(e []byte) []byte { return e[1+l.KeySize : 1+l.KeySize+l.valSize] }

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
