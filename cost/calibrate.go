package cost

import (
	"encoding/binary"
	"testing"
)

// Measurement is one row of a calibration: what the table says, and what
// the kernel took on this machine.
type Measurement struct {
	Name     string
	TableNs  float64
	Measured float64
	Unit     string
}

// Calibrate measures each kernel on this machine with testing.Benchmark
// and returns it beside the table. It takes about a second per row.
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
	per := func(f func(b *testing.B), units float64) float64 {
		r := testing.Benchmark(f)
		return float64(r.T.Nanoseconds()) / float64(r.N) / units
	}
	return []Measurement{
		{"search step (61 keys / 6 steps)", Default.SearchStepNs, per(func(b *testing.B) {
			for i := range b.N {
				binary.BigEndian.PutUint64(probe, uint64(i%122))
				sink += SearchSorted(keys, 8, probe)
			}
		}, 6), "ns/step"},
		{"unsorted scan (54 entries)", Default.ScanEntryNs, per(func(b *testing.B) {
			for range b.N {
				sink += ScanUnsorted(entries, 18, 8, probe)
			}
		}, 54), "ns/entry"},
		{"fingerprint probe (64 slots)", Default.FingerprintSlotNs, per(func(b *testing.B) {
			var hits []int
			for i := range b.N {
				hits = ProbeFingerprints(table, byte(i), hits[:0])
			}
			sink += len(hits)
		}, 64), "ns/slot"},
		{"hash (24-byte key)", Default.HashNs, per(func(b *testing.B) {
			for i := range b.N {
				key24[0] = byte(i)
				sink += int(Hash(key24))
			}
		}, 1), "ns"},
		{"CRC (1 KB)", Default.CRCByteNs, per(func(b *testing.B) {
			for range b.N {
				sink += int(CRC(kb))
			}
		}, 1024), "ns/byte"},
		{"copy (1 KB)", Default.CopyByteNs, per(func(b *testing.B) {
			for range b.N {
				sink += copy(dst, kb)
			}
		}, 1024), "ns/byte"},
		{"cache lookup (1 M-entry map)", Default.CacheLookupNs, per(func(b *testing.B) {
			x := uint64(1)
			for range b.N {
				x = x*6364136223846793005 + 1442695040888963407
				sink += int(cache[(x>>44)*0x9e3779b97f4a7c15])
			}
		}, 1), "ns"},
	}
}
