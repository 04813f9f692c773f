package cost

import (
	"bytes"
	"hash/crc32"
	"hash/maphash"
)

// The kernels are the local work indexes do, written once here so that the
// cost table can be measured on the project's own code (Calibrate) rather
// than guessed. Index packages may call them or their own equivalents; the
// table charges the same either way.

// SearchSorted returns the first slot of keys (fixed-size, sorted) at or
// after key: the binary search within a sorted B+-tree node.
func SearchSorted(keys []byte, keySize int, key []byte) int {
	lo, hi := 0, len(keys)/keySize
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if bytes.Compare(keys[m*keySize:(m+1)*keySize], key) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// ScanUnsorted returns the slot of key among unsorted fixed-size entries
// of stride bytes whose key leads the entry, or -1: the linear search of an
// unsorted leaf such as Sherman's.
func ScanUnsorted(entries []byte, stride, keySize int, key []byte) int {
	for i := 0; i+stride <= len(entries); i += stride {
		if bytes.Equal(entries[i:i+keySize], key) {
			return i / stride
		}
	}
	return -1
}

// ProbeFingerprints appends to hits the slots whose 1-byte fingerprint is
// fp: the probe of an FP-B+-tree or DMTree fingerprint table.
func ProbeFingerprints(table []byte, fp byte, hits []int) []int {
	for i, b := range table {
		if b == fp {
			hits = append(hits, i)
		}
	}
	return hits
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// CRC is the checksum indexes store in the 8-byte field beside entries and
// nodes larger than a cacheline (RF-tree, DMTree, SMART). It is CRC-32C
// because the CPU computes that in hardware, which keeps the simulator's
// own wall time down (a table-driven CRC-64 here was a twentieth of it);
// what a run is charged for a checksum is the table's CRCByteNs, not this
// function's speed.
func CRC(b []byte) uint64 { return uint64(crc32.Checksum(b, crcTable)) }

var seed = maphash.MakeSeed()

// Hash hashes a key for fingerprints, hopscotch buckets and consistent
// hashing. Its values are never part of a simulated result: indexes that
// place data by hash use FNV or their own mixing so runs stay
// reproducible; this kernel only measures the cost.
func Hash(key []byte) uint64 { return maphash.Bytes(seed, key) }
