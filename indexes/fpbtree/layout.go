package fpbtree

import (
	"bytes"
	"encoding/binary"
	"hash/fnv"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/internal/keyorder"
	"github.com/dmbench/dmbench/transport"
)

// Geometry is the byte layout of one tree: it depends only on the key and
// value sizes and the spans, so every compute node computes the same one.
type Geometry struct {
	K, V     int // key and value bytes
	Span     int // entries per leaf
	ISpan    int // entries per internal node
	Entry    int // entry bytes: meta + key + value (+ CRC past a cacheline)
	Stride   int // entry slot spacing: packed (Entry rounded to 8) unless a multi-word value must not straddle a cacheline
	HasCRC   bool
	LeafHdr  int // leaf header bytes (64-aligned)
	Table    int // fingerprint-table block bytes (fps, version, CRC, lock)
	TableOff int // fps bytes rounded to 8: offset of the version word
	TableRun int // table block rounded to 64: its slot in a leaf or region
	LeafSize int
	IEntry   int // internal entry bytes: key, child, version, fp pointer
	IHdr     int
	NodeSize int // internal node bytes (64-aligned), lock word last
}

func roundUp(x, a int) int { return (x + a - 1) / a * a }

// NewGeometry lays out a tree of k-byte keys, v-byte values, span entries
// per leaf and ispan entries per internal node.
func NewGeometry(k, v, span, ispan int) Geometry {
	g := Geometry{K: k, V: v, Span: span, ISpan: ispan}
	g.Entry = 8 + k + v
	switch {
	case g.Entry > transport.CachelineBytes:
		// Past a cacheline the CRC finds a torn READ, wherever the
		// entry starts.
		g.HasCRC = true
		g.Entry += 8
		g.Stride = roundUp(g.Entry, 8)
	case v <= 8 && k%8 == 0:
		// Packed as the artifact packs them (a 40-byte entry with
		// DMTree's keys), so an entry may straddle two cachelines.
		// Without a CRC that is safe only because every field a WRITE
		// of a live slot changes is one aligned word (the value; the
		// meta word and key stay) and a slot is never reused while a
		// reader may still hold its fingerprint (fpFreed).
		g.Stride = roundUp(g.Entry, 8)
	default:
		// A value of more than one word, or one that a key of odd
		// length leaves unaligned, could land torn across a cacheline
		// boundary: its slot is padded to a power of two so it never
		// straddles one, the cacheline atomicity the paper's CRC-free
		// entries rely on.
		g.Stride = 8
		for g.Stride < g.Entry {
			g.Stride *= 2
		}
	}
	g.LeafHdr = roundUp(48+2*k, 64)
	g.TableOff = roundUp(span, 8)
	g.Table = g.TableOff + 24
	g.TableRun = roundUp(g.Table, 64)
	g.LeafSize = g.LeafHdr + g.TableRun + span*g.Stride
	g.IEntry = k + 24
	g.IHdr = 32 + 2*k
	g.NodeSize = roundUp(g.IHdr+ispan*g.IEntry+16, 64)
	return g
}

// Leaf header words.
const (
	lhVersion = 0  // leaf version ID, >= 1, bumped when the leaf's range changes
	lhLock    = 8  // lock word, used when a placement keeps leaf locks in the leaf
	lhSibling = 16 // right sibling leaf
	lhFP      = 24 // fingerprint-table pointer (placement-defined; 0 = in the leaf)
	lhFlags   = 32 // flagInf: high fence is +inf; flagDead: merged away
	lhLow     = 40
)

const (
	flagInf  = 1
	flagDead = 2
)

// leafHeader is a decoded leaf header.
type leafHeader struct {
	version uint64
	sibling transport.GAddr
	fp      uint64
	flags   uint64
	low     []byte
	high    []byte
}

func (g *Geometry) encodeLeafHeader(dst []byte, h *leafHeader) {
	binary.LittleEndian.PutUint64(dst[lhVersion:], h.version)
	binary.LittleEndian.PutUint64(dst[lhSibling:], uint64(h.sibling))
	binary.LittleEndian.PutUint64(dst[lhFP:], h.fp)
	binary.LittleEndian.PutUint64(dst[lhFlags:], h.flags)
	copy(dst[lhLow:lhLow+g.K], h.low)
	copy(dst[lhLow+g.K:lhLow+2*g.K], h.high)
	binary.LittleEndian.PutUint64(dst[lhLow+2*g.K:], g.leafHeaderCRC(dst))
}

// leafHeaderCRC covers the header without its lock word, which CAS changes.
func (g *Geometry) leafHeaderCRC(h []byte) uint64 {
	return cost.CRC(h[lhSibling:lhLow+2*g.K]) ^ binary.LittleEndian.Uint64(h[lhVersion:])
}

// decodeLeafHeader returns the header and whether its CRC holds (a leaf
// header spans two cachelines, so a READ may see it torn).
func (g *Geometry) decodeLeafHeader(b []byte) (leafHeader, bool) {
	h := leafHeader{
		version: binary.LittleEndian.Uint64(b[lhVersion:]),
		sibling: transport.GAddr(binary.LittleEndian.Uint64(b[lhSibling:])),
		fp:      binary.LittleEndian.Uint64(b[lhFP:]),
		flags:   binary.LittleEndian.Uint64(b[lhFlags:]),
		low:     bytes.Clone(b[lhLow : lhLow+g.K]),
		high:    bytes.Clone(b[lhLow+g.K : lhLow+2*g.K]),
	}
	ok := h.version != 0 && binary.LittleEndian.Uint64(b[lhLow+2*g.K:]) == g.leafHeaderCRC(b)
	return h, ok
}

// contains reports whether key falls in [low, high).
func contains(low, high []byte, inf bool, key []byte) bool {
	return bytes.Compare(key, low) >= 0 && (inf || bytes.Compare(key, high) < 0)
}

// Table is a decoded fingerprint table: one byte per leaf slot (0 empty),
// the leaf version it belongs to.
type Table struct {
	FPs     []byte
	Version uint64
}

// EncodeTable writes t into a table block with the given lock word.
func (g *Geometry) EncodeTable(dst []byte, t *Table, lock uint64) {
	copy(dst[:g.Span], t.FPs)
	binary.LittleEndian.PutUint64(dst[g.TableOff:], t.Version)
	binary.LittleEndian.PutUint64(dst[g.TableOff+8:], cost.CRC(dst[:g.TableOff+8]))
	binary.LittleEndian.PutUint64(dst[g.TableOff+16:], lock)
}

// DecodeTable decodes a table block; ok is false when it is torn or was
// never written (version 0). The table's FPs alias b: a caller that keeps
// the table, or changes its fingerprints, owns b.
func (g *Geometry) DecodeTable(b []byte) (Table, bool) {
	t := Table{FPs: b[:g.Span:g.Span], Version: binary.LittleEndian.Uint64(b[g.TableOff:])}
	ok := t.Version != 0 && binary.LittleEndian.Uint64(b[g.TableOff+8:]) == cost.CRC(b[:g.TableOff+8])
	return t, ok
}

// LockOffset is the offset of the lock word within a table block: last,
// so that one WRITE of the block releases the lock after the fingerprints
// (DMTree section 3.3, collaborative embedded unlocking).
func (g *Geometry) LockOffset() int { return g.TableOff + 16 }

// entryOff is the offset of slot i within a leaf.
func (g *Geometry) entryOff(i int) int { return g.LeafHdr + g.TableRun + i*g.Stride }

// Entry meta word: bit 0 valid, bits 1-63 the leaf version it was written under.
func entryMeta(valid bool, version uint64) uint64 {
	m := version << 1
	if valid {
		m |= 1
	}
	return m
}

func (g *Geometry) encodeEntry(dst []byte, valid bool, version uint64, key, val []byte) {
	binary.LittleEndian.PutUint64(dst, entryMeta(valid, version))
	copy(dst[8:8+g.K], key)
	copy(dst[8+g.K:8+g.K+g.V], val)
	if g.HasCRC {
		binary.LittleEndian.PutUint64(dst[g.Entry-8:], cost.CRC(dst[:g.Entry-8]))
	}
}

// entry is a decoded leaf entry.
type entry struct {
	valid   bool
	version uint64
	key     []byte
	val     []byte
}

// decodeEntry decodes an entry; ok is false when its CRC (entries past a
// cacheline) shows it torn.
func (g *Geometry) decodeEntry(b []byte) (entry, bool) {
	m := binary.LittleEndian.Uint64(b)
	e := entry{valid: m&1 == 1, version: m >> 1, key: b[8 : 8+g.K], val: b[8+g.K : 8+g.K+g.V]}
	if g.HasCRC && binary.LittleEndian.Uint64(b[g.Entry-8:]) != cost.CRC(b[:g.Entry-8]) {
		return e, false
	}
	return e, true
}

// Fingerprint is the 1-byte hash of a key, in [1, fpFreed): 0 marks an
// empty slot and fpFreed a freed one. FNV, not cost.Hash, so that
// placement never depends on a process seed.
func Fingerprint(key []byte) byte {
	h := fnv.New64a()
	h.Write(key)
	s := h.Sum64()
	fp := byte(s) ^ byte(s>>8) ^ byte(s>>16) ^ byte(s>>24) ^ byte(s>>32) ^ byte(s>>40) ^ byte(s>>48) ^ byte(s>>56)
	switch fp {
	case 0:
		fp = 1
	case fpFreed:
		fp = fpFreed - 1
	}
	return fp
}

// fpFreed marks a slot whose entry a delete removed. Inserts do not reuse
// it until a split or merge rewrites the leaf under a new version: a
// reader that took the old fingerprint from a table may still be about to
// READ the slot, and a new entry landing in a packed slot that straddles
// two cachelines could reach it half old, half new, with nothing in the
// entry to tell (no CRC, same version).
const fpFreed = 0xff

// occupied reports whether a slot's fingerprint names an entry.
func occupied(fp byte) bool { return fp != 0 && fp != fpFreed }

// Internal node: header words, fences, entries, CRC, lock word last (at
// the end of the node, DMTree section 3.3).
const (
	ihVersion = 0
	ihSibling = 8
	ihLevel   = 16 // level (1 = bottom, parents of leaves)
	ihCount   = 20 // uint32 entries
	ihFlags   = 24
	ihLow     = 32
)

// inode is a decoded internal node. The fields every cached search reads
// (ents, flags and the high fence's prefix) come first, within the node's
// first 40 bytes: one or two cachelines to miss on, not three.
type inode struct {
	ents    []ientry
	flags   uint64
	high    ikey
	addr    transport.GAddr
	version uint64
	sibling transport.GAddr
	level   int
	low     ikey
}

// ientry is one internal entry: the child's minimum key, address and, in
// the bottom level, the leaf version and fingerprint-table pointer. Of
// the key's prefix it keeps the first word, which orders hashed keys
// unless they tie: 56 bytes an entry instead of 72, so that a search,
// which is mostly cache misses on the entries it bisects (a sixth of
// DMTree's CPU time), touches fewer cachelines.
type ientry struct {
	p0      uint64 // keyorder.Of(key)[0]
	key     []byte
	child   transport.GAddr
	version uint64
	fp      uint64
}

// entryOf is the internal entry of key, with its first prefix word.
func entryOf(key []byte, child transport.GAddr, version, fp uint64) ientry {
	return ientry{p0: keyorder.Of(key)[0], key: key, child: child, version: version, fp: fp}
}

// ikey is a fence of an internal node, or a key searched for, with its
// prefix: every operation checks a cached node's fences and searches its
// entries, and comparing prefixes as integers is several times cheaper
// than bytes.Compare. Building one computes the prefix, so a key and its
// prefix never disagree however nodes are decoded, split or merged.
type ikey struct {
	p keyorder.Prefix
	b []byte
}

func ikeyOf(b []byte) ikey { return ikey{p: keyorder.Of(b), b: b} }

// cmp orders k against o as bytes.Compare orders their keys; the
// prefixes decide unless they tie.
func (k *ikey) cmp(o *ikey) int {
	if c := k.p.Compare(o.p); c != 0 {
		return c
	}
	return bytes.Compare(k.b, o.b)
}

func (n *inode) inf() bool { return n.flags&flagInf != 0 }

func (g *Geometry) encodeNode(dst []byte, n *inode) {
	clear(dst)
	binary.LittleEndian.PutUint64(dst[ihVersion:], n.version)
	binary.LittleEndian.PutUint64(dst[ihSibling:], uint64(n.sibling))
	binary.LittleEndian.PutUint32(dst[ihLevel:], uint32(n.level))
	binary.LittleEndian.PutUint32(dst[ihCount:], uint32(len(n.ents)))
	binary.LittleEndian.PutUint64(dst[ihFlags:], n.flags)
	copy(dst[ihLow:], n.low.b)
	copy(dst[ihLow+g.K:], n.high.b)
	for i, e := range n.ents {
		b := dst[g.IHdr+i*g.IEntry:]
		copy(b, e.key)
		binary.LittleEndian.PutUint64(b[g.K:], uint64(e.child))
		binary.LittleEndian.PutUint64(b[g.K+8:], e.version)
		binary.LittleEndian.PutUint64(b[g.K+16:], e.fp)
	}
	binary.LittleEndian.PutUint64(dst[g.NodeSize-16:], cost.CRC(dst[:g.NodeSize-16]))
}

// decodeNode decodes an internal node; ok is false when torn or unwritten.
// The node's fences and entry keys alias b, which the node then owns: one
// image per node instead of a copy per key (a cache miss decodes dozens).
func (g *Geometry) decodeNode(b []byte, addr transport.GAddr) (*inode, bool) {
	if binary.LittleEndian.Uint64(b[g.NodeSize-16:]) != cost.CRC(b[:g.NodeSize-16]) {
		return nil, false
	}
	cnt := int(binary.LittleEndian.Uint32(b[ihCount:]))
	if cnt > g.ISpan || binary.LittleEndian.Uint64(b[ihVersion:]) == 0 {
		return nil, false
	}
	n := &inode{
		addr:    addr,
		version: binary.LittleEndian.Uint64(b[ihVersion:]),
		sibling: transport.GAddr(binary.LittleEndian.Uint64(b[ihSibling:])),
		level:   int(binary.LittleEndian.Uint32(b[ihLevel:])),
		flags:   binary.LittleEndian.Uint64(b[ihFlags:]),
		low:     ikeyOf(b[ihLow : ihLow+g.K : ihLow+g.K]),
		high:    ikeyOf(b[ihLow+g.K : ihLow+2*g.K : ihLow+2*g.K]),
	}
	n.ents = make([]ientry, cnt)
	for i := range n.ents {
		e := b[g.IHdr+i*g.IEntry:]
		n.ents[i] = entryOf(e[:g.K:g.K], transport.GAddr(binary.LittleEndian.Uint64(e[g.K:])),
			binary.LittleEndian.Uint64(e[g.K+8:]), binary.LittleEndian.Uint64(e[g.K+16:]))
	}
	return n, true
}

// nodeLock is the address of an internal node's lock word.
func (g *Geometry) nodeLock(a transport.GAddr) transport.GAddr { return a.Add(uint64(g.NodeSize - 8)) }

// childFor returns the index of the entry covering key (the last entry
// whose key is <= key; 0 when key precedes them all).
func (n *inode) childFor(key []byte) int {
	k := ikeyOf(key)
	return n.childOf(&k)
}

// childOf is childFor of a key whose prefix the caller already has. The
// first prefix words decide unless they tie, as they do between hashed
// keys only by chance; then the whole keys do.
func (n *inode) childOf(k *ikey) int {
	lo, hi := 0, len(n.ents)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if e := &n.ents[m]; e.p0 < k.p[0] || e.p0 == k.p[0] && bytes.Compare(e.key, k.b) <= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return max(lo-1, 0)
}
