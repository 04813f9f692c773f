package chime

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortedByKey checks the sort of a leaf's entries against a plain
// sort by key, for keys that share long prefixes, as ordered keys do.
func TestSortedByKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	for round := range 3000 {
		n := []int{3, 8, 12, 24}[round%4]
		es := make([]entry, rng.IntN(70))
		for i := range es {
			k := make([]byte, n)
			if n >= 8 {
				binary.BigEndian.PutUint64(k[n-8:], uint64(rng.IntN(1<<(round%40))))
			} else {
				k[n-1] = byte(rng.IntN(256))
			}
			if round%7 == 0 {
				k[0] = byte(rng.IntN(2))
			}
			es[i] = entry{hdr: byte(i), key: k}
		}
		got := sortedByKey(es)
		want := slices.Clone(es)
		slices.SortFunc(want, compareKeys)
		if duplicated(got) != duplicated(want) {
			t.Fatalf("round %d: repeats %v, want %v", round, duplicated(got), duplicated(want))
		}
		if duplicated(want) {
			continue // in no given order
		}
		for i := range got {
			if got[i].hdr != want[i].hdr {
				t.Fatalf("round %d: entry %d is %x, want %x", round, i, got[i].key, want[i].key)
			}
		}
	}
}
