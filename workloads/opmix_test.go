package workloads

import (
	"math/rand"
	"testing"

	"github.com/pingcap/go-ycsb/pkg/generator"
)

// The mix draws what go-ycsb's Discrete draws from the same source.
func TestOpMixMatchesDiscrete(t *testing.T) {
	weights := []float64{0.3, 0.05, 0.25, 0.1, 0.3}
	var m opMix
	d := generator.NewDiscrete()
	for i, w := range weights {
		m.add(w, OpType(i))
		d.Add(w, int64(i))
	}
	a, b := rand.New(rand.NewSource(3)), rand.New(rand.NewSource(3))
	for i := range 100000 {
		if x, y := m.next(a), OpType(d.Next(b)); x != y {
			t.Fatalf("draw %d: %v, Discrete %v", i, x, y)
		}
	}
}
