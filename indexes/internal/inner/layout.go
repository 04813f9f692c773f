package inner

import (
	"bytes"
	"encoding/binary"

	"github.com/dmbench/dmbench/transport"
)

// The node header, which leaves and internal nodes share so that a node
// can be read before its kind is known, as Sherman's LeafPage and
// InternalPage share theirs. Its first 8 bytes are the index's own:
// Sherman's CRC word, Marlin's embedded lock word.
const (
	OffFront    = 8  // 1 B: node front version
	offLevel    = 9  // 1 B: level (bits 0-6), bit 7 set when the high fence is +inf
	offCount    = 10 // 2 B: keys in an internal node
	offLeftmost = 12 // 8 B: an internal node's child for keys below its first key
	OffSibling  = 20 // 8 B: right sibling at the same level (0 = none)
	offLow      = 28 // K B: low fence (inclusive), then the high fence (exclusive, K B)

	unboundedBit = 0x80
	levelMask    = 0x7f
)

// nodeAlign aligns nodes to cachelines, so that in paper memory mode a
// node's first word and front version share its first cacheline and its
// rear version its last, and so that the root pointer has room for the
// root's level in its low bits.
const nodeAlign = transport.CachelineBytes

// HeaderBytes is the header's size with fences of keySize bytes.
func HeaderBytes(keySize int) int { return offLow + 2*keySize }

// Layout is the geometry of an index's internal nodes: entries of
// [key][child] from the end of the header (Hdr, which an index may round
// up) on, sorted by key, and the rear version in the last byte.
type Layout struct {
	KeySize    int
	Hdr        int // header bytes: entries start here
	InnerEntry int // K + 8
	InnerBytes int // bytes per internal node
	// InnerCard is the keys an internal node holds: one that reaches it
	// is split at once, so at rest every internal node has room for one
	// more.
	InnerCard int
}

// NewLayout is the layout of internal nodes of innerBytes holding
// innerCard keys of keySize bytes after a header of hdr bytes.
func NewLayout(keySize, hdr, innerBytes, innerCard int) Layout {
	return Layout{KeySize: keySize, Hdr: hdr, InnerEntry: keySize + 8, InnerBytes: innerBytes, InnerCard: innerCard}
}

// Header accessors on a node image.

func Level(b []byte) int       { return int(b[offLevel] & levelMask) }
func Unbounded(b []byte) bool  { return b[offLevel]&unboundedBit != 0 }
func Count(b []byte) int       { return int(binary.LittleEndian.Uint16(b[offCount:])) }
func setCount(b []byte, n int) { binary.LittleEndian.PutUint16(b[offCount:], uint16(n)) }
func Sibling(b []byte) transport.GAddr {
	return transport.GAddr(binary.LittleEndian.Uint64(b[OffSibling:]))
}
func setSibling(b []byte, a transport.GAddr) {
	binary.LittleEndian.PutUint64(b[OffSibling:], uint64(a))
}
func leftmost(b []byte) transport.GAddr {
	return transport.GAddr(binary.LittleEndian.Uint64(b[offLeftmost:]))
}

func (l *Layout) Low(b []byte) []byte  { return b[offLow : offLow+l.KeySize] }
func (l *Layout) High(b []byte) []byte { return b[offLow+l.KeySize : offLow+2*l.KeySize] }

// InitNode clears b and writes a header: level, fences (high nil means
// +inf) and sibling.
func (l *Layout) InitNode(b []byte, lvl int, low, high []byte, sib transport.GAddr) {
	clear(b)
	b[offLevel] = byte(lvl)
	copy(l.Low(b), low)
	l.SetHigh(b, high)
	setSibling(b, sib)
}

// SetHigh sets the high fence; nil means +inf.
func (l *Layout) SetHigh(b []byte, high []byte) {
	if high == nil {
		b[offLevel] |= unboundedBit
		clear(l.High(b))
		return
	}
	b[offLevel] &^= unboundedBit
	copy(l.High(b), high)
}

// HighOrNil returns the high fence, nil when it is +inf.
func (l *Layout) HighOrNil(b []byte) []byte {
	if Unbounded(b) {
		return nil
	}
	return l.High(b)
}

// Covers reports whether key lies in [low, high) of node b.
func (l *Layout) Covers(b []byte, key []byte) bool {
	return compareKeys(key, l.Low(b)) >= 0 && (Unbounded(b) || compareKeys(key, l.High(b)) < 0)
}

// compareKeys orders keys as bytes.Compare does, by 8-byte big-endian
// words first, which decide in line between keys that differ in their
// first word (hashed keys) or a later one (dense keys): a search compares
// a handful of fences and separators, and bytes.Compare's call into
// assembly cost more than the comparisons.
func compareKeys(a, b []byte) int {
	for len(a) >= 8 && len(b) >= 8 {
		if x, y := binary.BigEndian.Uint64(a), binary.BigEndian.Uint64(b); x != y {
			if x < y {
				return -1
			}
			return 1
		}
		a, b = a[8:], b[8:]
	}
	return bytes.Compare(a, b)
}

// CoversAll reports whether node b spans the whole key space: only the
// root does (nodes never merge, so the only node of a level that covers
// everything is the top one).
func (l *Layout) CoversAll(b []byte) bool { return Unbounded(b) && IsZero(l.Low(b)) }

// IsZero reports whether k is the zero key, the lowest.
func IsZero(k []byte) bool {
	for _, c := range k {
		if c != 0 {
			return false
		}
	}
	return true
}

// SetVersions bumps the node's front and rear versions together, as
// Sherman's set_consistent does before every whole-node WRITE.
func SetVersions(b []byte) {
	b[OffFront]++
	b[len(b)-1] = b[OffFront]
}

// VersionsMatch is the node-level half of Sherman's two-level check: the
// front and rear versions agree.
func VersionsMatch(b []byte) bool { return b[OffFront] == b[len(b)-1] }

// KeyRange is a key range [Lo, Hi); Hi nil means +inf. Known is false
// when nothing is known about a node's range (a node reached through a
// sibling pointer), which every check treats as "may straddle anything".
type KeyRange struct {
	Lo, Hi []byte
	Known  bool
}

// fullRange is the range of the root: the whole key space.
func (l *Layout) fullRange() KeyRange {
	return KeyRange{Lo: make([]byte, l.KeySize), Known: true}
}

// Internal nodes: keys sorted, children[0] is the leftmost pointer and
// children[i+1] follows key i.

func (l *Layout) innerKey(b []byte, i int) []byte {
	o := l.Hdr + i*l.InnerEntry
	return b[o : o+l.KeySize]
}

func (l *Layout) InnerChild(b []byte, i int) transport.GAddr {
	if i == 0 {
		return leftmost(b)
	}
	o := l.Hdr + (i-1)*l.InnerEntry + l.KeySize
	return transport.GAddr(binary.LittleEndian.Uint64(b[o:]))
}

func (l *Layout) setInnerChild(b []byte, i int, a transport.GAddr) {
	if i == 0 {
		binary.LittleEndian.PutUint64(b[offLeftmost:], uint64(a))
		return
	}
	o := l.Hdr + (i-1)*l.InnerEntry + l.KeySize
	binary.LittleEndian.PutUint64(b[o:], uint64(a))
}

// childIndex is the child of internal node b that covers key: the number
// of keys at or below key.
func (l *Layout) childIndex(b []byte, key []byte) int {
	lo, hi := 0, Count(b)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if compareKeys(l.innerKey(b, m), key) <= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// childRange is the key range internal node b assigns to child i. It
// aliases b.
func (l *Layout) childRange(b []byte, i int) KeyRange {
	r := KeyRange{Known: true}
	if i == 0 {
		r.Lo = l.Low(b)
	} else {
		r.Lo = l.innerKey(b, i-1)
	}
	if i < Count(b) {
		r.Hi = l.innerKey(b, i)
	} else {
		r.Hi = l.HighOrNil(b)
	}
	return r
}

// insertInner puts (key, child) into internal node b at its sorted place,
// or repoints key if it is there already. b holds fewer than InnerCard
// keys.
func (l *Layout) insertInner(b []byte, key []byte, child transport.GAddr) {
	n := Count(b)
	i := l.childIndex(b, key)
	if i > 0 && bytes.Equal(l.innerKey(b, i-1), key) {
		l.setInnerChild(b, i, child)
		return
	}
	o := l.Hdr + i*l.InnerEntry
	copy(b[o+l.InnerEntry:l.Hdr+(n+1)*l.InnerEntry], b[o:l.Hdr+n*l.InnerEntry])
	copy(b[o:], key)
	setCount(b, n+1)
	l.setInnerChild(b, i+1, child)
}

// splitInner splits the full internal node img, to be relinked to a new
// right sibling at sibAddr: the middle key goes up, the keys above it and
// their children go to sib, the keys below it stay in old, which keeps
// img's front version (sealing bumps it). It returns the key that goes up.
func (l *Layout) splitInner(img, old, sib []byte, sibAddr transport.GAddr) []byte {
	n := Count(img)
	m := n / 2
	lvl := Level(img)
	up := bytes.Clone(l.innerKey(img, m))
	l.InitNode(sib, lvl, up, l.HighOrNil(img), Sibling(img))
	l.setInnerChild(sib, 0, l.InnerChild(img, m+1))
	for i := m + 1; i < n; i++ {
		l.insertInner(sib, l.innerKey(img, i), l.InnerChild(img, i+1))
	}
	l.InitNode(old, lvl, l.Low(img), up, sibAddr)
	old[OffFront] = img[OffFront]
	copy(old[offLeftmost:offLeftmost+8], img[offLeftmost:offLeftmost+8])
	copy(old[l.Hdr:l.Hdr+m*l.InnerEntry], img[l.Hdr:l.Hdr+m*l.InnerEntry])
	setCount(old, m)
	return up
}
