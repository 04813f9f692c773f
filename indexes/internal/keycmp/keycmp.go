// Package keycmp compares keys as bytes.Compare does, faster for keys of
// equal length: eight bytes at a time, as big-endian numbers. Range
// queries compare every key they find, with their bounds and to sort
// them, and for the benchmarks' 8- and 24-byte keys the call into
// bytes.Compare's assembly cost more than the comparison.
package keycmp

import (
	"bytes"
	"cmp"
	"encoding/binary"
)

// Compare returns bytes.Compare(a, b).
func Compare(a, b []byte) int {
	if len(a) == len(b) {
		for len(a) >= 8 {
			if x, y := binary.BigEndian.Uint64(a), binary.BigEndian.Uint64(b); x != y {
				return cmp.Compare(x, y)
			}
			a, b = a[8:], b[8:]
		}
		if len(a) == 0 {
			return 0
		}
	}
	return bytes.Compare(a, b)
}
