package cost

import (
	"encoding/binary"
	"hash/crc64"
	"time"
)

var crc64Table = crc64.MakeTable(crc64.ECMA)

// Measurement is one row of a calibration: what the table says, and what
// the kernel took on this machine.
type Measurement struct {
	Name     string
	TableNs  float64
	Measured float64
	Unit     string
}

// Calibrate measures each kernel on this machine and returns it beside the
// table. It takes about a second per row.
func Calibrate() []Measurement {
	keys := make([]byte, 61*8)
	for i := range 61 {
		binary.BigEndian.PutUint64(keys[i*8:], uint64(2*i+1))
	}
	probe := make([]byte, 8)
	entries := make([]byte, 54*18)
	table := make([]byte, 64)
	kb := make([]byte, 1024)
	dst := make([]byte, 1024)
	key24 := make([]byte, 24)
	cache := make(map[uint64]uint64, 1<<20)
	for i := range uint64(1 << 20) {
		cache[i*0x9e3779b97f4a7c15] = i
	}
	var sink int
	per := func(f func(n int), units float64) float64 { return timePerCall(f) / units }
	return []Measurement{
		{"search step (61 keys / 6 steps)", Default.SearchStepNs, per(func(n int) {
			for i := range n {
				binary.BigEndian.PutUint64(probe, uint64(i%122))
				sink += SearchSorted(keys, 8, probe)
			}
		}, 6), "ns/step"},
		{"unsorted scan (54 entries)", Default.ScanEntryNs, per(func(n int) {
			for range n {
				sink += ScanUnsorted(entries, 18, 8, probe)
			}
		}, 54), "ns/entry"},
		{"fingerprint probe (64 slots)", Default.FingerprintSlotNs, per(func(n int) {
			var hits []int
			for i := range n {
				hits = ProbeFingerprints(table, byte(i), hits[:0])
			}
			sink += len(hits)
		}, 64), "ns/slot"},
		{"hash (24-byte key)", Default.HashNs, per(func(n int) {
			for i := range n {
				key24[0] = byte(i)
				sink += int(Hash(key24))
			}
		}, 1), "ns"},
		// The artifacts checksum in software; CRC's hardware CRC-32C
		// would understate them (see CRCByteNs).
		{"software CRC-64 (1 KB)", Default.CRCByteNs, per(func(n int) {
			for range n {
				sink += int(crc64.Checksum(kb, crc64Table))
			}
		}, 1024), "ns/byte"},
		{"copy (1 KB)", Default.CopyByteNs, per(func(n int) {
			for range n {
				sink += copy(dst, kb)
			}
		}, 1024), "ns/byte"},
		{"cache lookup (1 M-entry map)", Default.CacheLookupNs, per(func(n int) {
			x := uint64(1)
			for range n {
				x = x*6364136223846793005 + 1442695040888963407
				sink += int(cache[(x>>44)*0x9e3779b97f4a7c15])
			}
		}, 1), "ns"},
	}
}

// calibrationTime is how long a kernel must run for its mean to count.
const calibrationTime = 500 * time.Millisecond

// timePerCall runs f(n) with n doubling until one run takes
// calibrationTime, and returns that run's mean ns per iteration: the
// approach of testing.Benchmark, without linking package testing into
// the binaries.
func timePerCall(f func(n int)) float64 {
	for n := 1; ; n *= 2 {
		start := time.Now()
		f(n)
		if d := time.Since(start); d >= calibrationTime || n >= 1<<40 {
			return float64(d.Nanoseconds()) / float64(n)
		}
	}
}
