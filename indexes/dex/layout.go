package dex

import (
	"bytes"
	"encoding/binary"

	"github.com/dmbench/dmbench/indexes/internal/keycmp"
)

// NodeBytes is the size of every tree node (section 8.1: 1 KB nodes).
const NodeBytes = 1024

// Node header, bytes:
//
//	0   lock word: bit 0 set while an RDMA writer holds the node, the rest
//	    a version bumped by every remote write of a shared node
//	8   the node's own global address (section 3: stored in the header)
//	16  level (1 B, 0 = leaf), flags (1 B), count (2 B), 4 B reserved
//	24  low fence key, then high fence key (KeySize bytes each)
//	    reserved up to hdrMin
//
// DEX's header is 96 bytes with 8-byte keys, which gives the 58 leaf
// entries of its repository; we keep the same size.
const (
	offLock  = 0
	offSelf  = 8
	offLevel = 16
	offFlags = 17
	offCount = 18
	offFence = 24
	hdrMin   = 96
)

// flagNoHigh marks a node whose high fence is +infinity.
const flagNoHigh = 1

// swizzled marks a child pointer in a cached inner node that names a
// local cache frame rather than a global address (section 3: the most
// significant bit of a tagged pointer). GAddr node ids stay below 2^15.
const swizzled = uint64(1) << 63

// layout is the node format for one key and value size.
type layout struct {
	ks, vs   int
	hdr      int // header bytes
	leafEnt  int // bytes per leaf entry
	innerEnt int // bytes per inner entry: key + child pointer
	leafCap  int
	innerCap int
}

func newLayout(ks, vs int) layout {
	h := max(hdrMin, (offFence+2*ks+7)/8*8)
	l := layout{ks: ks, vs: vs, hdr: h, leafEnt: ks + vs, innerEnt: ks + 8}
	l.leafCap = (NodeBytes - h) / l.leafEnt
	l.innerCap = (NodeBytes - h) / l.innerEnt
	return l
}

// node is a view of one node image (NodeBytes long).
type node []byte

func (n node) lockWord() uint64     { return binary.LittleEndian.Uint64(n[offLock:]) }
func (n node) setLockWord(v uint64) { binary.LittleEndian.PutUint64(n[offLock:], v) }
func (n node) self() uint64         { return binary.LittleEndian.Uint64(n[offSelf:]) }
func (n node) setSelf(a uint64)     { binary.LittleEndian.PutUint64(n[offSelf:], a) }
func (n node) level() int           { return int(n[offLevel]) }
func (n node) setLevel(l int)       { n[offLevel] = byte(l) }
func (n node) count() int           { return int(binary.LittleEndian.Uint16(n[offCount:])) }
func (n node) setCount(c int)       { binary.LittleEndian.PutUint16(n[offCount:], uint16(c)) }
func (n node) noHigh() bool         { return n[offFlags]&flagNoHigh != 0 }

func (l *layout) low(n node) []byte  { return n[offFence : offFence+l.ks] }
func (l *layout) high(n node) []byte { return n[offFence+l.ks : offFence+2*l.ks] }

// setFences sets the key range [low, high); high nil is +infinity.
func (l *layout) setFences(n node, low, high []byte) {
	copy(l.low(n), low)
	if high == nil {
		n[offFlags] |= flagNoHigh
		clear(l.high(n))
		return
	}
	n[offFlags] &^= flagNoHigh
	copy(l.high(n), high)
}

// highKey is the high fence, nil for +infinity.
func (l *layout) highKey(n node) []byte {
	if n.noHigh() {
		return nil
	}
	return l.high(n)
}

// covers reports whether key lies in the node's fence range.
func (l *layout) covers(n node, key []byte) bool {
	return keycmp.Compare(key, l.low(n)) >= 0 && (n.noHigh() || keycmp.Compare(key, l.high(n)) < 0)
}

// Leaf entries: key then value, sorted by key.
func (l *layout) leafKey(n node, i int) []byte {
	o := l.hdr + i*l.leafEnt
	return n[o : o+l.ks]
}

func (l *layout) leafVal(n node, i int) []byte {
	o := l.hdr + i*l.leafEnt + l.ks
	return n[o : o+l.vs]
}

// leafFind returns the position of key and whether it is there.
func (l *layout) leafFind(n node, key []byte) (int, bool) {
	lo, hi := 0, n.count()
	for lo < hi {
		m := (lo + hi) / 2
		if keycmp.Compare(l.leafKey(n, m), key) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < n.count() && bytes.Equal(l.leafKey(n, lo), key)
}

// leafInsertAt shifts entries up and writes key, val at position i.
func (l *layout) leafInsertAt(n node, i int, key, val []byte) {
	c := n.count()
	o := l.hdr + i*l.leafEnt
	copy(n[o+l.leafEnt:l.hdr+(c+1)*l.leafEnt], n[o:l.hdr+c*l.leafEnt])
	copy(n[o:], key)
	copy(n[o+l.ks:o+l.leafEnt], val)
	n.setCount(c + 1)
}

// leafRemoveAt removes the entry at position i.
func (l *layout) leafRemoveAt(n node, i int) { l.removeAt(n, i, l.leafEnt) }

// removeAt removes entry i of size-byte entries, shifting the rest down
// and zeroing the freed slot.
func (l *layout) removeAt(n node, i, size int) {
	c := n.count()
	o := l.hdr + i*size
	copy(n[o:], n[o+size:l.hdr+c*size])
	clear(n[l.hdr+(c-1)*size : l.hdr+c*size])
	n.setCount(c - 1)
}

// Inner entries: separator key then child pointer. Entry i's child holds
// keys in [key i, key i+1); key 0 equals the node's low fence.
func (l *layout) innerKey(n node, i int) []byte {
	o := l.hdr + i*l.innerEnt
	return n[o : o+l.ks]
}

func (l *layout) child(n node, i int) uint64 {
	return binary.LittleEndian.Uint64(n[l.hdr+i*l.innerEnt+l.ks:])
}

func (l *layout) setChild(n node, i int, p uint64) {
	binary.LittleEndian.PutUint64(n[l.hdr+i*l.innerEnt+l.ks:], p)
}

// innerFind is the position of the child covering key: the last entry
// whose key is <= key (0 when key is below every separator).
func (l *layout) innerFind(n node, key []byte) int {
	lo, hi := 1, n.count()
	for lo < hi {
		m := (lo + hi) / 2
		if keycmp.Compare(l.innerKey(n, m), key) <= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

// childRange is the key range of child i: [key i, key i+1 or high fence).
func (l *layout) childRange(n node, i int) (low, high []byte) {
	low = l.innerKey(n, i)
	if i+1 < n.count() {
		return low, l.innerKey(n, i+1)
	}
	return low, l.highKey(n)
}

// innerInsertAt inserts separator key with child p at position i.
func (l *layout) innerInsertAt(n node, i int, key []byte, p uint64) {
	c := n.count()
	o := l.hdr + i*l.innerEnt
	copy(n[o+l.innerEnt:l.hdr+(c+1)*l.innerEnt], n[o:l.hdr+c*l.innerEnt])
	copy(n[o:], key)
	binary.LittleEndian.PutUint64(n[o+l.ks:], p)
	n.setCount(c + 1)
}

// innerRemoveAt removes entry i (never 0).
func (l *layout) innerRemoveAt(n node, i int) { l.removeAt(n, i, l.innerEnt) }

// capacity is the entry capacity of a node at level lv.
func (l *layout) capacity(lv int) int {
	if lv == 0 {
		return l.leafCap
	}
	return l.innerCap
}

// full reports whether n cannot take one more entry.
func (l *layout) full(n node) bool { return n.count() >= l.capacity(n.level()) }

// splitInto moves the upper half of n into right (a zeroed image) and
// returns the separator: right's low fence.
func (l *layout) splitInto(n, right node) []byte {
	c := n.count()
	half := c / 2
	ent := l.leafEnt
	if n.level() > 0 {
		ent = l.innerEnt
	}
	var sep []byte
	if n.level() == 0 {
		sep = bytes.Clone(l.leafKey(n, half))
	} else {
		sep = bytes.Clone(l.innerKey(n, half))
	}
	right.setLevel(n.level())
	l.setFences(right, sep, l.highKey(n))
	copy(right[l.hdr:], n[l.hdr+half*ent:l.hdr+c*ent])
	right.setCount(c - half)
	clear(n[l.hdr+half*ent : l.hdr+c*ent])
	n.setCount(half)
	l.setFences(n, l.low(n), sep)
	return sep
}
