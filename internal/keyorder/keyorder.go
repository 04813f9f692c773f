// Package keyorder orders byte-string keys by integer prefixes, for the
// compute-side search structures (node caches, directories) that every
// simulated operation consults. A B-tree ordered by bytes.Compare on key
// slices follows a pointer per comparison and compares byte by byte; with
// 1,728 clients sharing the caches those comparisons were a tenth of the
// simulator's time. Runs keeps each value's first 24 bytes of key by
// value, so a comparison is up to three integer compares on the item
// itself and looks at the full key only when the prefixes tie.
package keyorder

import (
	"bytes"
	"encoding/binary"
)

// Words is how many leading 8-byte words of a key a Prefix holds: 24
// bytes, the key size of the papers' workloads, so that ordered keys,
// which differ only in their last bytes, order without a tie.
const Words = 3

// Prefix is a key's first 24 bytes as big-endian words, zero padded.
// Prefixes order keys as bytes.Compare does, except that keys which agree
// on their first 24 bytes (or differ only by trailing zero bytes within
// them) tie.
type Prefix [Words]uint64

// Of is key's prefix.
func Of(key []byte) Prefix {
	var p Prefix
	for i := range p {
		p[i] = Word(key, 8*i)
	}
	return p
}

// Word is key's 8 bytes from off as a big-endian word, zero padded past
// key's end: two keys equal before off whose words differ order as their
// words do.
func Word(key []byte, off int) uint64 {
	if len(key) >= off+8 {
		return binary.BigEndian.Uint64(key[off:])
	}
	var b [8]byte
	if off < len(key) {
		copy(b[:], key[off:])
	}
	return binary.BigEndian.Uint64(b[:])
}

// CommonPrefix is the length of the longest common prefix of a and b.
func CommonPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// Compare is -1, 0 or +1 as p orders before, level with, or after q.
func (p Prefix) Compare(q Prefix) int {
	for i := range p {
		if p[i] != q[i] {
			if p[i] < q[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// Compare orders two keys given with their prefixes: the prefixes decide
// unless they tie, then the full keys do.
func Compare(p Prefix, a []byte, q Prefix, b []byte) int {
	if c := p.Compare(q); c != 0 {
		return c
	}
	return bytes.Compare(a, b)
}
