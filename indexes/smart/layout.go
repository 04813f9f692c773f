package smart

import (
	"encoding/binary"
	"hash/crc64"

	"github.com/dmbench/dmbench/transport"
)

// Allocation: slots keep a node's or leaf's offset shifted right by 8
// bits, so every allocation is 256-byte aligned and rounded up to 256
// bytes (SMART's include/LocalAllocator.h): a 34-byte leaf takes 256
// bytes, a 2,064-byte internal node 2,304.
const (
	allocAlign = 256
	fanout     = 256
	numTypes   = 7 // capacities 4, 8, ..., 256 (fine-grained node types)
	// maxPrefix is the compressed prefix a header holds; longer common
	// prefixes become chains of nodes.
	maxPrefix = 6
)

// Internal node: reverse pointer, header word, 256 slots. It is always
// allocated whole; its type only bounds how many slot bytes a READ fetches.
const (
	nodeRev    = 0
	nodeHeader = 8
	nodeSlots  = 16
	nodeBytes  = nodeSlots + fanout*8 // 2,064
)

func roundAlloc(n int) uint64 { return uint64((n + allocAlign - 1) / allocAlign * allocAlign) }

// capacity is the number of slots of node type t.
func capacity(t int) int { return 4 << t }

// typeFor is the smallest type whose capacity exceeds slot index i.
func typeFor(i int) int {
	for t := range numTypes {
		if capacity(t) > i {
			return t
		}
	}
	return numTypes - 1
}

// nodeReadBytes is what a READ of a node of type t fetches.
func nodeReadBytes(t int) int { return nodeSlots + 8*capacity(t) }

// Slot (8 bytes, one little-endian word, updated only by CAS):
//
//	bits  0-39  offset >> 8 of the leaf or node
//	bits 40-47  memory node id
//	bits 48-54  leaf length (leaves, 0 if >= 128) or node type (nodes)
//	bit  55     leaf flag
//	bits 56-63  partial key: the key byte that chose this slot
//
// An all-zero word is an empty slot. A tombstone (leaf flag, no address)
// marks a deleted key: it keeps its partial key, so a key byte never moves
// to another slot of the node once it has one (see doc.go, Deletes).
const (
	slotLeaf    = uint64(1) << 55
	slotAddrMsk = uint64(1)<<48 - 1
	slotTypeMsk = uint64(0x7f) << 48
)

func isEmpty(s uint64) bool     { return s == 0 }
func isLeaf(s uint64) bool      { return s&slotLeaf != 0 }
func isTombstone(s uint64) bool { return isLeaf(s) && s&slotAddrMsk == 0 }
func isNode(s uint64) bool      { return s != 0 && !isLeaf(s) }
func partialOf(s uint64) byte   { return byte(s >> 56) }
func slotType(s uint64) int     { return int(s >> 48 & 0x7f) }

// absent reports whether a slot holds no key: empty or a tombstone.
func absent(s uint64) bool { return isEmpty(s) || isTombstone(s) }

func slotTarget(s uint64) transport.GAddr {
	node := transport.NodeID(s >> 40 & 0xff)
	return transport.Addr(node, (s&(1<<40-1))<<8)
}

func packAddr(a transport.GAddr) uint64 {
	return uint64(a.Node())<<40 | a.Offset()>>8
}

func leafSlot(partial byte, a transport.GAddr, leafLen int) uint64 {
	l := uint64(0)
	if leafLen < 128 {
		l = uint64(leafLen)
	}
	return uint64(partial)<<56 | slotLeaf | l<<48 | packAddr(a)
}

func nodeSlot(partial byte, a transport.GAddr, typ int) uint64 {
	return uint64(partial)<<56 | uint64(typ)<<48 | packAddr(a)
}

func tombstone(partial byte) uint64 { return uint64(partial)<<56 | slotLeaf }

func withPartial(s uint64, partial byte) uint64 { return s&^(0xff<<56) | uint64(partial)<<56 }
func withType(s uint64, typ int) uint64         { return s&^slotTypeMsk | uint64(typ)<<48 }

// Header (8 bytes at nodeHeader, one little-endian word):
//
//	byte 0      depth: the key byte where the node's prefix starts
//	byte 1      bits 0-4 node type, bits 5-7 prefix length (0-6)
//	bytes 2-7   compressed prefix
//
// The type bits change by masked CAS when a node grows (type switch); the
// rest by masked CAS when a prefix is split.
const hdrTypeMask = uint64(0x1f) << 8

type header struct {
	depth  int
	typ    int
	plen   int
	prefix [maxPrefix]byte
}

func decodeHeader(w uint64) header {
	h := header{depth: int(w & 0xff), typ: int(w >> 8 & 0x1f), plen: int(w >> 13 & 7)}
	for i := range maxPrefix {
		h.prefix[i] = byte(w >> (16 + 8*i))
	}
	return h
}

func (h header) word() uint64 {
	w := uint64(h.depth) | uint64(h.typ)<<8 | uint64(h.plen)<<13
	for i := range h.plen {
		w |= uint64(h.prefix[i]) << (16 + 8*i)
	}
	return w
}

// node is a decoded image of an internal node as READ.
type node struct {
	rev   transport.GAddr
	hdr   header
	slots []uint64 // as many as were read
}

func decodeNode(b []byte) node {
	n := node{rev: transport.GAddr(binary.LittleEndian.Uint64(b[nodeRev:])), hdr: decodeHeader(binary.LittleEndian.Uint64(b[nodeHeader:]))}
	n.slots = make([]uint64, (len(b)-nodeSlots)/8)
	for i := range n.slots {
		n.slots[i] = binary.LittleEndian.Uint64(b[nodeSlots+8*i:])
	}
	return n
}

func encodeNode(rev transport.GAddr, h header, slots []uint64) []byte {
	b := make([]byte, nodeReadBytes(h.typ))
	binary.LittleEndian.PutUint64(b[nodeRev:], uint64(rev))
	binary.LittleEndian.PutUint64(b[nodeHeader:], h.word())
	for i, s := range slots {
		binary.LittleEndian.PutUint64(b[nodeSlots+8*i:], s)
	}
	return b
}

func slotAddr(nodeAddr transport.GAddr, i int) transport.GAddr {
	return nodeAddr.Add(uint64(nodeSlots + 8*i))
}

// Leaf (one key-value pair, packed; 34 bytes with 8-byte keys and values):
//
//	0       reverse pointer: address of the slot that points here (8)
//	8       valid byte (1)
//	9       CRC-64 of key and value (8)
//	17      key (K)
//	17+K    value (V)
//	17+K+V  lock byte (1): bit 0 lock, bit 1 dead (deleted, never reused)
//
// The lock is taken by masked CAS on the aligned 8-byte word holding the
// lock byte, comparing and setting only its bits.
//
// variant=dex lays the leaf out as DEX's copy does (include/smart/Node.h
// class Leaf, its packed attribute dropped at :112): the C++ struct with
// its alignment padding, and an 8-byte lock word (Node.h:52) of its own
// (48 bytes with 8-byte keys and values):
//
//	0       reverse pointer (8)
//	8       valid byte (1), 7 bytes padding
//	16      CRC-64 of key and value (8)
//	24      key (K)
//	V0      value (V, at least 8: a union with a uint64), V0 = 24+K rounded up to 8
//	L       lock word (8): 0 free, all ones locked, 2 dead; L = V0+V rounded up to 8
type leafLayout struct {
	ks, vs   int
	crc      int    // offset of the CRC
	key, val int    // offsets of key and value
	size     int    // bytes, the READ size
	alloc    uint64 // allocated bytes
	lockOff  int    // offset of the lock byte (the lock word's low byte with wholeWord)
	lockWord int    // offset of the word holding the lock byte
	lockBit  uint64 // lock bit within that word
	deadBit  uint64
	// wholeWord: the lock is the whole word at lockWord, and an in-place
	// WRITE rewrites the whole leaf (variant=dex).
	wholeWord bool
}

const (
	leafRev   = 0
	leafValid = 8
)

// lockDead is the lock byte of a deleted leaf in both layouts: bit 1, the
// dead bit of the packed lock byte, and with wholeWord a lock word of 2,
// neither free (0) nor locked (all ones).
const lockDead = 2

// dexLocked is a held whole-word lock (variant=dex): DEX's copy CASes
// the word from 0 to ~0 (src/smart.cpp:531).
const dexLocked = ^uint64(0)

func newLeafLayout(ks, vs int) leafLayout {
	l := leafLayout{ks: ks, vs: vs, crc: 9, key: 17}
	l.val = l.key + ks
	l.size = l.val + vs + 1
	l.alloc = roundAlloc(l.size)
	l.lockOff = l.size - 1
	l.lockWord = l.lockOff &^ 7
	l.lockBit = 1 << (8 * (l.lockOff - l.lockWord))
	l.deadBit = l.lockBit << 1
	return l
}

// newDexLeafLayout is the leaf of DEX's copy of SMART (variant=dex).
func newDexLeafLayout(ks, vs int) leafLayout {
	round8 := func(n int) int { return (n + 7) &^ 7 }
	l := leafLayout{ks: ks, vs: vs, crc: 16, key: 24, wholeWord: true}
	l.val = round8(l.key + ks)
	l.lockWord = round8(l.val + max(vs, 8))
	l.lockOff = l.lockWord
	l.size = l.lockWord + 8
	l.alloc = roundAlloc(l.size)
	return l
}

var crcTable = crc64.MakeTable(crc64.ECMA)

// crcSlices extends crcTable for slicing by 8: crcSlices[j][b] is the
// CRC update for byte b followed by j zero bytes, so eight bytes take
// eight independent lookups rather than a chain of eight. hash/crc64 does
// the same, but only for inputs of 64 bytes or more; a scan checks every
// leaf it reads, 16 bytes with the benchmarks' keys and values.
var crcSlices = func() *[8]crc64.Table {
	var t [8]crc64.Table
	t[0] = *crcTable
	for b := range 256 {
		c := crcTable[b]
		for j := 1; j < 8; j++ {
			c = crcTable[byte(c)] ^ c>>8
			t[j][b] = c
		}
	}
	return &t
}()

// crcUpdate is crc64.Update(crc, crcTable, p).
func crcUpdate(crc uint64, p []byte) uint64 {
	crc = ^crc
	t := crcSlices
	for ; len(p) >= 8; p = p[8:] {
		crc ^= binary.LittleEndian.Uint64(p)
		crc = t[7][byte(crc)] ^ t[6][byte(crc>>8)] ^ t[5][byte(crc>>16)] ^ t[4][byte(crc>>24)] ^
			t[3][byte(crc>>32)] ^ t[2][byte(crc>>40)] ^ t[1][byte(crc>>48)] ^ t[0][crc>>56]
	}
	for _, v := range p {
		crc = t[0][byte(crc)^v] ^ crc>>8
	}
	return ^crc
}

// leaf is a decoded leaf image.
type leaf struct {
	rev   transport.GAddr
	valid bool
	crc   uint64
	key   []byte
	val   []byte
	lock  byte
}

func (l *leafLayout) decode(b []byte) leaf {
	return leaf{
		rev:   transport.GAddr(binary.LittleEndian.Uint64(b[leafRev:])),
		valid: b[leafValid] == 1,
		crc:   binary.LittleEndian.Uint64(b[l.crc:]),
		key:   b[l.key : l.key+l.ks],
		val:   b[l.val : l.val+l.vs],
		lock:  b[l.lockOff],
	}
}

func (l *leafLayout) checksum(key, val []byte) uint64 {
	return crcUpdate(crcUpdate(0, key), val)
}

// consistent reports whether the CRC matches key and value: a READ that
// overlapped a WRITE of the leaf fails it and is repeated.
func (l *leafLayout) consistent(lf leaf) bool { return lf.crc == l.checksum(lf.key, lf.val) }

// encode builds a whole leaf image.
func (l *leafLayout) encode(rev transport.GAddr, key, val []byte, valid bool, lock byte) []byte {
	b := make([]byte, l.size)
	binary.LittleEndian.PutUint64(b[leafRev:], uint64(rev))
	if valid {
		b[leafValid] = 1
	}
	binary.LittleEndian.PutUint64(b[l.crc:], l.checksum(key, val))
	copy(b[l.key:], key)
	copy(b[l.val:], val)
	b[l.lockOff] = lock
	return b
}

// rewrite is what an in-place update or a delete WRITEs, from offset off
// of the leaf: everything after the reverse pointer (valid byte to lock
// byte), which a concurrent leaf split may have swung (see doc.go); with
// wholeWord the whole leaf, reverse pointer rev as read included, as
// DEX's copy WRITEs sizeof(Leaf) from the leaf's start (src/smart.cpp:618).
func (l *leafLayout) rewrite(rev transport.GAddr, key, val []byte, valid bool, lock byte) (off int, b []byte) {
	if l.wholeWord {
		return leafRev, l.encode(rev, key, val, valid, lock)
	}
	return leafValid, l.encode(0, key, val, valid, lock)[leafValid:]
}
