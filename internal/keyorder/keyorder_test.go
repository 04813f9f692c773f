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

// Less orders items by their full keys when the prefixes tie, as a B-tree
// over keys longer than the prefix needs.
func TestLessBreaksTiesByKey(t *testing.T) {
	long := func(last byte) string { return string(bytes.Repeat([]byte{7}, 8*Words)) + string([]byte{last}) }
	a, b := long(1), long(2)
	less := Less(func(s string) string { return s })
	ia, ib := Item[string]{P: Of([]byte(a)), V: a}, Item[string]{P: Of([]byte(b)), V: b}
	if ia.P != ib.P {
		t.Fatal("the test's keys must share their prefix")
	}
	if !less(ia, ib) || less(ib, ia) || less(ia, ia) {
		t.Errorf("Less on keys equal in their first %d bytes: a<b %v, b<a %v, a<a %v; want true, false, false", 8*Words, less(ia, ib), less(ib, ia), less(ia, ia))
	}
}
