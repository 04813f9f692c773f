package keycmp

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func TestCompare(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for range 100000 {
		a := make([]byte, rng.IntN(30))
		b := make([]byte, len(a))
		if rng.IntN(4) == 0 {
			b = make([]byte, rng.IntN(30))
		}
		// Few byte values, so that keys share long prefixes.
		for i := range a {
			a[i] = byte(rng.IntN(3))
		}
		for i := range b {
			b[i] = byte(rng.IntN(3))
		}
		if got, want := Compare(a, b), bytes.Compare(a, b); got != want {
			t.Fatalf("Compare(%x, %x) = %d, want %d", a, b, got, want)
		}
	}
}
