package chime

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/dmbench/dmbench/internal/keyorder"
	"github.com/dmbench/dmbench/transport"
)

// Internal node layout (doc.go draws it): a B+-tree node read and written
// whole, guarded by a front and a rear version that every write advances
// together, so a READ overlapping a WRITE sees them differ.
const (
	inLock     = 0  // 8 B lock word (bit 63)
	inFront    = 8  // 8 B front version
	inLevel    = 16 // 1 B level, leaves are 0
	inFlags    = 17 // 1 B: bit 0 low fence -inf, bit 1 high fence +inf
	inCount    = 18 // 2 B separator count
	inSibling  = 24 // 8 B right sibling
	inLeftmost = 32 // 8 B child for keys below the first separator
	inFences   = 40 // K B low fence, K B high fence, then [key][child] pairs
	lowInf     = 1
	highInf    = 2
)

// inner is a decoded internal node.
type inner struct {
	addr      transport.GAddr
	version   uint64
	level     int
	lowInf    bool
	highInf   bool
	low, high []byte
	sibling   transport.GAddr
	leftmost  transport.GAddr
	keys      [][]byte
	children  []transport.GAddr
	// The prefixes of the fences and of keys: every search compares its
	// key with a cached node's fences and separators, and comparing
	// prefixes as integers, held in line, spares following a pointer and
	// comparing bytes each time (a tenth of the simulator's time).
	lowP, highP keyorder.Prefix
	pre         []keyorder.Prefix
}

// index sets the prefixes of n's fences and separators. Decoding a node
// calls it, and so does every change of a node searched after it (a
// bulk-loaded node is only written); insertSep keeps them itself.
func (n *inner) index() {
	n.lowP, n.highP = keyorder.Of(n.low), keyorder.Of(n.high)
	n.pre = n.pre[:0]
	for _, k := range n.keys {
		n.pre = append(n.pre, keyorder.Of(k))
	}
}

// innerGeometry sizes internal nodes.
type innerGeometry struct {
	keySize, span, bytes int
}

func newInnerGeometry(keySize, span int) innerGeometry {
	body := inFences + 2*keySize + span*(keySize+8)
	return innerGeometry{keySize: keySize, span: span, bytes: roundUp(body+8, lineBytes)}
}

func (ig innerGeometry) rear() int { return ig.bytes - 8 }

// covers reports whether key lies in the node's fences.
func (n *inner) covers(key []byte) bool {
	p := keyorder.Of(key)
	return (n.lowInf || keyorder.Compare(p, key, n.lowP, n.low) >= 0) && (n.highInf || keyorder.Compare(p, key, n.highP, n.high) < 0)
}

// beyond reports whether key is at or past the high fence (B-link: go right).
func (n *inner) beyond(key []byte) bool {
	return !n.highInf && keyorder.Compare(keyorder.Of(key), key, n.highP, n.high) >= 0
}

// child returns the child covering key (key is within the fences).
func (n *inner) child(key []byte) transport.GAddr {
	i := n.upper(key)
	if i == 0 {
		return n.leftmost
	}
	return n.children[i-1]
}

// upper is the number of separators <= key.
func (n *inner) upper(key []byte) int {
	p := keyorder.Of(key)
	lo, hi := 0, len(n.keys)
	for lo < hi {
		m := (lo + hi) / 2
		// keyorder.Compare, in line: the full key is loaded only on a tie.
		c := n.pre[m].Compare(p)
		if c == 0 {
			c = bytes.Compare(n.keys[m], key)
		}
		if c <= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// decodeInner parses a node image; ok is false when it is torn.
func (ig innerGeometry) decode(addr transport.GAddr, b []byte) (*inner, bool) {
	front := binary.LittleEndian.Uint64(b[inFront:])
	if front != binary.LittleEndian.Uint64(b[ig.rear():]) {
		return nil, false
	}
	k := ig.keySize
	cnt := int(binary.LittleEndian.Uint16(b[inCount:]))
	if cnt > ig.span {
		return nil, false
	}
	n := &inner{
		addr:     addr,
		version:  front,
		level:    int(b[inLevel]),
		lowInf:   b[inFlags]&lowInf != 0,
		highInf:  b[inFlags]&highInf != 0,
		low:      bytes.Clone(b[inFences : inFences+k]),
		high:     bytes.Clone(b[inFences+k : inFences+2*k]),
		sibling:  transport.GAddr(binary.LittleEndian.Uint64(b[inSibling:])),
		leftmost: transport.GAddr(binary.LittleEndian.Uint64(b[inLeftmost:])),
		keys:     make([][]byte, cnt),
		children: make([]transport.GAddr, cnt),
	}
	for i := range cnt {
		off := inFences + 2*k + i*(k+8)
		n.keys[i] = bytes.Clone(b[off : off+k])
		n.children[i] = transport.GAddr(binary.LittleEndian.Uint64(b[off+k:]))
	}
	n.index()
	return n, true
}

// encode renders n with version n.version, lock word clear.
func (ig innerGeometry) encode(n *inner) ([]byte, error) {
	if len(n.keys) > ig.span {
		return nil, fmt.Errorf("internal node of %d separators exceeds span %d", len(n.keys), ig.span)
	}
	k := ig.keySize
	b := make([]byte, ig.bytes)
	binary.LittleEndian.PutUint64(b[inFront:], n.version)
	binary.LittleEndian.PutUint64(b[ig.rear():], n.version)
	b[inLevel] = byte(n.level)
	if n.lowInf {
		b[inFlags] |= lowInf
	}
	if n.highInf {
		b[inFlags] |= highInf
	}
	binary.LittleEndian.PutUint16(b[inCount:], uint16(len(n.keys)))
	binary.LittleEndian.PutUint64(b[inSibling:], uint64(n.sibling))
	binary.LittleEndian.PutUint64(b[inLeftmost:], uint64(n.leftmost))
	copy(b[inFences:], n.low)
	copy(b[inFences+k:], n.high)
	for i := range n.keys {
		off := inFences + 2*k + i*(k+8)
		copy(b[off:], n.keys[i])
		binary.LittleEndian.PutUint64(b[off+k:], uint64(n.children[i]))
	}
	return b, nil
}

// insertSep adds separator key with its right child in order.
func (n *inner) insertSep(key []byte, child transport.GAddr) {
	i := n.upper(key)
	n.keys = append(n.keys, nil)
	copy(n.keys[i+1:], n.keys[i:])
	n.keys[i] = bytes.Clone(key)
	n.children = append(n.children, 0)
	copy(n.children[i+1:], n.children[i:])
	n.children[i] = child
	n.pre = slices.Insert(n.pre, i, keyorder.Of(key))
}

// hasSep reports whether key is already a separator (a retried parent
// insert after a lost race).
func (n *inner) hasSep(key []byte) bool {
	i := n.upper(key)
	return i > 0 && bytes.Equal(n.keys[i-1], key)
}

// bytesCached is the cache footprint charged for a node.
func (ig innerGeometry) bytesCached() uint64 { return uint64(ig.bytes) }
