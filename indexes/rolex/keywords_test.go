package rolex

import (
	"bytes"
	"encoding/binary"
	"sort"
	"testing"

	"github.com/dmbench/dmbench/indexes/indextest"
)

// keyWords finds what sort.Search with bytes.Compare finds, for keys that
// tie on their words (indextest's keys come in runs sharing all but their
// last 8 bytes), for dense keys (a shared zero prefix) and for probes
// below, among, between and above the keys.
func TestKeyWordsSearch(t *testing.T) {
	dense := func(n, size int) [][]byte {
		ks := make([][]byte, n)
		for i := range ks {
			ks[i] = binary.BigEndian.AppendUint64(make([]byte, size-8), uint64(3*i+1000))
		}
		return ks
	}
	for _, c := range []struct {
		name string
		keys [][]byte
	}{
		{"hashed24", indextest.Keys(500, 24)},
		{"hashed8", indextest.Keys(500, 8)},
		{"dense24", dense(500, 24)},
		{"dense8", dense(500, 8)},
		{"one", dense(1, 24)},
		{"none", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			size := 24
			if len(c.keys) > 0 {
				size = len(c.keys[0])
			}
			w := newKeyWords(bytes.Join(c.keys, nil), size)
			probes := [][]byte{make([]byte, size), bytes.Repeat([]byte{0xff}, size)}
			for i := range uint64(2000) {
				probes = append(probes, indextest.Key(i, size), binary.BigEndian.AppendUint64(make([]byte, size-8), 1000+i))
			}
			probes = append(probes, c.keys...)
			n := len(c.keys)
			// ref is the first key in [lo, hi) above k, or at or above it.
			ref := func(k []byte, orEqual bool, lo, hi int) int {
				return lo + sort.Search(hi-lo, func(i int) bool {
					d := bytes.Compare(c.keys[lo+i], k)
					return d > 0 || orEqual && d == 0
				})
			}
			for _, k := range probes {
				p := w.probe(k)
				for _, orEqual := range []bool{false, true} {
					if got, want := w.first(p, orEqual), ref(k, orEqual, 0, n); got != want {
						t.Fatalf("key %x, orEqual %v: first %d, want %d", k, orEqual, got, want)
					}
					if got, want := w.search(p, orEqual, n/3, n/2), ref(k, orEqual, n/3, n/2); got != want {
						t.Fatalf("key %x, orEqual %v: search of [%d, %d) %d, want %d", k, orEqual, n/3, n/2, got, want)
					}
				}
			}
		})
	}
}
