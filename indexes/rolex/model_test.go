package rolex

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/dmbench/dmbench/indexes/indextest"
)

// Every key, loaded or not, has its insert target within the leaves the
// model predicts for it, so a search finds what an insert placed.
func TestTargetWithinPrediction(t *testing.T) {
	for _, c := range []struct{ keySize, span, eps int }{{8, 16, 16}, {24, 8, 8}, {24, 8, 1}, {24, 16, 4}} {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			loaded := indextest.Keys(1000, c.keySize)
			m := train(loaded, c.span, c.eps)
			probes := slices.Clone(loaded)
			for i := uint64(0); i < 20000; i++ {
				probes = append(probes, indextest.Key(i, c.keySize))
			}
			probes = append(probes, make([]byte, c.keySize), bytes.Repeat([]byte{0xff}, c.keySize))
			for _, k := range probes {
				l, r := m.leafRange(k)
				if tg := m.target(k); tg < l || tg > r {
					t.Fatalf("key %x: target leaf %d outside predicted [%d, %d]", k, tg, l, r)
				}
			}
		})
	}
}

// train builds the model BulkLoad would for sorted keys.
func train(keys [][]byte, span, eps int) *model {
	tr := trainer{keySize: len(keys[0]), tol: float64(eps - 1)}
	for _, k := range keys {
		tr.add(k)
	}
	tr.close()
	n := len(keys)
	m := &model{keySize: len(keys[0]), span: span, eps: int64(eps), leaves: (n + span - 1) / span, keys: int64(n), firsts: tr.firsts, segs: tr.segs}
	for i := 0; i < m.leaves-1; i++ {
		m.fences = append(m.fences, keys[(i+1)*span-1]...)
	}
	m.index()
	return m
}
