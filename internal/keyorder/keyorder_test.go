package keyorder

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestCompareAgreesWithBytes checks Compare against bytes.Compare on keys
// of every length around the prefix width, sharing long common prefixes
// and trailing zero bytes, where a prefix alone cannot decide.
func TestCompareAgreesWithBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	key := func() []byte {
		k := make([]byte, r.IntN(3*8*Words))
		for i := range k {
			k[i] = byte(r.IntN(3)) // small alphabet: many ties and zeros
		}
		return k
	}
	for range 200_000 {
		a, b := key(), key()
		want := bytes.Compare(a, b)
		if got := Compare(Of(a), a, Of(b), b); got != want {
			t.Fatalf("Compare(%x, %x) = %d, bytes.Compare says %d", a, b, got, want)
		}
		if c := Of(a).Compare(Of(b)); c != 0 && c != want {
			t.Fatalf("prefixes of %x and %x order %d, keys order %d", a, b, c, want)
		}
	}
}
