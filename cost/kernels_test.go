package cost

import (
	"encoding/binary"
	"testing"
)

func sortedKeys(n, keySize int) []byte {
	keys := make([]byte, n*keySize)
	for i := range n {
		binary.BigEndian.PutUint64(keys[i*keySize+keySize-8:], uint64(i*2+1))
	}
	return keys
}

func TestSearchSorted(t *testing.T) {
	keys := sortedKeys(61, 8)
	probe := make([]byte, 8)
	for i := range 61 {
		for d := 0; d < 2; d++ {
			binary.BigEndian.PutUint64(probe, uint64(i*2+d))
			if got := SearchSorted(keys, 8, probe); got != i {
				t.Fatalf("SearchSorted(%d) = %d, want %d", i*2+d, got, i)
			}
		}
	}
}

func TestScanAndProbe(t *testing.T) {
	entries := make([]byte, 54*18) // 8-byte key leading each 18-byte entry
	for i := range 54 {
		binary.BigEndian.PutUint64(entries[i*18:], uint64(i+1))
	}
	key := entries[20*18 : 20*18+8]
	if got := ScanUnsorted(entries, 18, 8, key); got != 20 {
		t.Errorf("ScanUnsorted = %d, want 20", got)
	}
	if got := ScanUnsorted(entries, 18, 8, make([]byte, 8)); got != -1 {
		t.Errorf("ScanUnsorted of an absent key = %d, want -1", got)
	}
	table := []byte{1, 7, 3, 7}
	if got := ProbeFingerprints(table, 7, nil); len(got) != 2 || got[0] != 1 || got[1] != 3 {
		t.Errorf("ProbeFingerprints = %v, want [1 3]", got)
	}
}
