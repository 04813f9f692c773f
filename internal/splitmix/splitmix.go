// Package splitmix is SplitMix64 (Steele, Lea and Flood, "Fast splittable
// pseudorandom number generators", OOPSLA 2014): dmbench's one
// deterministic hash of 64-bit words, for workload keys, the conformance
// suite's keys and hashed lock placement.
package splitmix

import "encoding/binary"

// Golden is SplitMix64's increment; consecutive multiples of it give
// well-separated seeds for the finaliser.
const Golden = 0x9e3779b97f4a7c15

// Mix is SplitMix64's finaliser. Every step (xor with a right shift,
// multiplication by an odd constant) is invertible, so Mix is a bijection
// on uint64 and Mix(x) == 0 only for x == 0.
func Mix(x uint64) uint64 {
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Fill fills dst with the SplitMix64 sequence seeded by seed, big-endian.
func Fill(dst []byte, seed uint64) {
	var word [8]byte
	for off := 0; off < len(dst); off += 8 {
		seed += Golden
		binary.BigEndian.PutUint64(word[:], Mix(seed))
		copy(dst[off:], word[:])
	}
}
