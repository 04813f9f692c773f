package marlin

import (
	"encoding/binary"
	"fmt"

	"github.com/dmbench/dmbench/indexes/internal/inner"
)

// Node layout (doc.go draws it). Leaves and internal nodes share the
// header of package inner, as Sherman's pages do, so a node can be read
// before its kind is known. Its first word is the node's embedded lock:
// the Spear in a leaf, Sherman's CAS lock in an internal node.
const (
	offLock = 0 // 8 B: leaf Spear counter / internal node lock holder

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
	inner.Layout // internal nodes: span keys
	valSize      int
	leafEntry    int
	span         int // entries per leaf and keys per internal node
	leafBytes    int
	itemBytes    int
}

func newLayout(keySize, valSize, span int) (layout, error) {
	if span < 4 {
		return layout{}, fmt.Errorf("span %d: need at least 4 entries per node", span)
	}
	hdr := align8(inner.HeaderBytes(keySize))
	l := layout{Layout: inner.NewLayout(keySize, hdr, hdr+span*(keySize+8)+1, span), valSize: valSize, span: span}
	l.leafEntry = 8 + align8(keySize)
	l.leafBytes = hdr + span*l.leafEntry + 1
	l.itemBytes = align8(8 + keySize + valSize)
	return l, nil
}

func align8(n int) int { return (n + 7) &^ 7 }

func lockWord(b []byte) uint64 { return binary.LittleEndian.Uint64(b[offLock:]) }

// consistent is a reader's check of a node image: no structure change was
// writing it (a leaf's Spear is not negative, an internal node is not
// locked) and its front and rear versions agree. The lock word is part of
// the image, so on a fabric whose READ is one snapshot the first test
// alone rules out a torn node; the versions cover READs that copy
// word by word in address order while a WRITE does the same.
func consistent(b []byte) bool {
	w := lockWord(b)
	if inner.Level(b) == 0 {
		if int64(w) < 0 {
			return false
		}
	} else if w != 0 {
		return false
	}
	return inner.VersionsMatch(b)
}

// Leaf slots: [item pointer 8][key K, padded to 8]. The pointer comes
// first so that a reader copying in address order that sees a final
// pointer sees the key its inserter wrote before it.

func (l *layout) slotOffset(i int) uint64 { return uint64(l.Hdr + i*l.leafEntry) }

func (l *layout) slotPtr(b []byte, i int) uint64 {
	return binary.LittleEndian.Uint64(b[l.slotOffset(i):])
}

func (l *layout) setSlotPtr(b []byte, i int, p uint64) {
	binary.LittleEndian.PutUint64(b[l.slotOffset(i):], p)
}

func (l *layout) slotKey(b []byte, i int) []byte {
	o := int(l.slotOffset(i)) + 8
	return b[o : o+l.KeySize]
}

// isItem reports whether a pointer word names a final item (live).
func isItem(p uint64) bool { return p != slotFree && p != slotTombstone && p&pendingBit == 0 }

// keyed reports whether a slot's key field is final: its pointer is an
// item or a tombstone (a pending slot's key may not have landed).
func keyed(p uint64) bool { return p != slotFree && p&pendingBit == 0 }

// Data items: [size word 8][key K][value V], padded to 8. The size word
// holds the key and value sizes (Marlin's data blocks carry their length
// for variable-sized values); the key makes an item self-describing, so
// that an insert can tell which key a slot it lost a race for belongs to.

func (l *layout) itemWord() uint64 { return uint64(l.KeySize) | uint64(l.valSize)<<16 }

func (l *layout) fillItem(b, key, val []byte) {
	binary.LittleEndian.PutUint64(b, l.itemWord())
	copy(b[8:], key)
	copy(b[8+l.KeySize:], val)
}

func (l *layout) itemKey(b []byte) []byte { return b[8 : 8+l.KeySize] }
func (l *layout) itemVal(b []byte) []byte {
	return b[8+l.KeySize : 8+l.KeySize+l.valSize]
}

// itemValid checks an item image's size word.
func (l *layout) itemValid(b []byte) bool { return binary.LittleEndian.Uint64(b) == l.itemWord() }
