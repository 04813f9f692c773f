package rolex

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/dmbench/dmbench/transport"
)

// Leaf layout. A leaf is metadata and span sorted entries (logical bytes):
//
//	[0]        node version
//	[1, 9)     synonym pointer (next leaf of the group; 0 = none)
//	[9, ...)   span entries of [valid 1 B][key K][value V], packed from 0
//
// On the wire every 64-byte line after the first starts with a copy of the
// node version, so a leaf of L logical bytes moves 64 + (L-64) +
// ceil((L-64)/63) bytes; the 8-byte lock word follows at the next 8-byte
// boundary, and slots are 64-byte aligned so the per-line versions sit at
// the start of real cachelines.
const (
	offVersion = 0
	offNext    = 1
	metaBytes  = 9
	lockBit    = 1
	lineBytes  = transport.CachelineBytes
)

type geometry struct {
	keySize, valSize int
	span             int
	entry            int // 1 + K + V
	logical          int // logical leaf bytes
	wire             int // bytes moved by a leaf READ or WRITE
	lockOff          uint64
	stride           uint64 // slot size of one leaf (leaf, lock word, padding)
}

func newGeometry(k, v, span int) (geometry, error) {
	if span < 2 {
		return geometry{}, fmt.Errorf("span %d: need at least 2 entries per leaf", span)
	}
	g := geometry{keySize: k, valSize: v, span: span, entry: 1 + k + v}
	g.logical = metaBytes + span*g.entry
	g.wire = g.logical
	if g.logical > lineBytes {
		rest := g.logical - lineBytes
		g.wire += (rest + lineBytes - 2) / (lineBytes - 1)
	}
	g.lockOff = uint64(g.wire+7) &^ 7
	g.stride = (g.lockOff + 8 + lineBytes - 1) &^ (lineBytes - 1)
	return g, nil
}

// leaf is a decoded leaf: n entries of K+V bytes, sorted by key.
type leaf struct {
	ver  byte
	next transport.GAddr
	n    int
	kv   []byte // span*(K+V), the first n entries live
}

func (g *geometry) newLeaf() *leaf { return &leaf{kv: make([]byte, g.span*(g.keySize+g.valSize))} }

func (g *geometry) kvBytes() int { return g.keySize + g.valSize }

func (g *geometry) key(l *leaf, i int) []byte {
	o := i * g.kvBytes()
	return l.kv[o : o+g.keySize]
}

func (g *geometry) val(l *leaf, i int) []byte {
	o := i*g.kvBytes() + g.keySize
	return l.kv[o : o+g.valSize]
}

// find returns the index of key in l and whether it is there; otherwise
// the index it would be inserted at.
func (g *geometry) find(l *leaf, key []byte) (int, bool) {
	lo, hi := 0, l.n
	for lo < hi {
		m := (lo + hi) / 2
		if bytes.Compare(g.key(l, m), key) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < l.n && bytes.Equal(g.key(l, lo), key)
}

// insertAt puts key and val at position i, shifting the entries above up.
// The leaf has room.
func (g *geometry) insertAt(l *leaf, i int, key, val []byte) {
	s := g.kvBytes()
	copy(l.kv[(i+1)*s:(l.n+1)*s], l.kv[i*s:l.n*s])
	copy(l.kv[i*s:], key)
	copy(l.kv[i*s+g.keySize:], val)
	l.n++
}

// removeAt drops entry i, shifting the entries above down.
func (g *geometry) removeAt(l *leaf, i int) {
	s := g.kvBytes()
	copy(l.kv[i*s:], l.kv[(i+1)*s:l.n*s])
	clear(l.kv[(l.n-1)*s : l.n*s])
	l.n--
}

// encode writes l in wire form into out (g.wire bytes).
func (g *geometry) encode(l *leaf, out []byte) {
	logical := make([]byte, g.logical)
	logical[offVersion] = l.ver
	binary.LittleEndian.PutUint64(logical[offNext:], uint64(l.next))
	s := g.kvBytes()
	for i := 0; i < l.n; i++ {
		o := metaBytes + i*g.entry
		logical[o] = 1
		copy(logical[o+1:o+1+s], l.kv[i*s:(i+1)*s])
	}
	g.toWire(logical, out, l.ver)
}

func (g *geometry) toWire(logical, out []byte, ver byte) {
	n := copy(out, logical[:min(lineBytes, len(logical))])
	for w := lineBytes; n < len(logical); w += lineBytes {
		out[w] = ver
		n += copy(out[w+1:min(w+lineBytes, g.wire)], logical[n:])
	}
}

// decode parses a leaf READ into l, using scratch (g.logical bytes);
// false when its lines carry different versions (a WRITE landed during
// the READ).
func (g *geometry) decode(wire, scratch []byte, l *leaf) bool {
	ver := wire[offVersion]
	logical := scratch[:g.logical]
	n := copy(logical, wire[:min(lineBytes, g.logical)])
	for w := lineBytes; n < g.logical; w += lineBytes {
		if wire[w] != ver {
			return false
		}
		n += copy(logical[n:], wire[w+1:min(w+lineBytes, g.wire)])
	}
	l.ver = ver
	l.next = transport.GAddr(binary.LittleEndian.Uint64(logical[offNext:]))
	s := g.kvBytes()
	l.n = 0
	for i := 0; i < g.span; i++ {
		o := metaBytes + i*g.entry
		if logical[o] == 0 {
			break
		}
		copy(l.kv[i*s:(i+1)*s], logical[o+1:o+1+s])
		l.n++
	}
	clear(l.kv[l.n*s:])
	return true
}
