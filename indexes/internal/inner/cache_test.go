package inner

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dmbench/dmbench/internal/keyorder"
	"github.com/dmbench/dmbench/transport"
)

// TestCachedNodeRoutes checks that a cached node routes every key it
// covers as a search of its image does and decides coverage as Covers
// does: nodes whose keys share prefixes of every length, so that the word
// routing by starts anywhere, of key sizes below, at and past a word, and
// with ties on the word.
func TestCachedNodeRoutes(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, keySize := range []int{4, 8, 13, 24} {
		const card = 12
		hdr := HeaderBytes(keySize)
		l := NewLayout(keySize, hdr, hdr+card*(keySize+8)+1, card)
		for range 300 {
			base := make([]byte, keySize)
			for i := range base {
				base[i] = byte(rng.IntN(256))
			}
			shared := rng.IntN(keySize + 1)
			key := func() []byte {
				k := bytes.Clone(base)
				for i := shared; i < keySize; i++ {
					k[i] = byte(rng.IntN(3)) // small alphabet: words tie
				}
				return k
			}
			// The fences and between them the node's keys, of which a long
			// shared prefix leaves few to draw.
			var keys [][]byte
			for range 100 {
				if k := key(); len(keys) < card+2 && !slices.ContainsFunc(keys, func(o []byte) bool { return bytes.Equal(o, k) }) {
					keys = append(keys, k)
				}
			}
			if len(keys) < 3 {
				continue
			}
			slices.SortFunc(keys, bytes.Compare)
			img := make([]byte, l.InnerBytes)
			high := keys[len(keys)-1]
			if rng.IntN(4) == 0 {
				high = nil
			}
			l.InitNode(img, 1, keys[0], high, 0)
			l.setInnerChild(img, 0, 1<<6)
			for i, k := range keys[1 : len(keys)-1] {
				l.insertInner(img, k, transport.GAddr(i+2)<<6)
			}
			n := newCachedNode(&l, 5<<6, img)
			for range 50 {
				k := key()
				if rng.IntN(4) == 0 {
					k = k[:rng.IntN(keySize+1)]
				}
				if bytes.Compare(k, keys[0]) < 0 {
					continue
				}
				covers := l.Covers(img, k)
				if got := n.coversFrom(&l, keyorder.Of(k), k); got != covers {
					t.Fatalf("key size %d, fences %x..%x: covers %x %v, want %v", keySize, keys[0], high, k, got, covers)
				}
				if !covers {
					continue
				}
				i, want := n.childIndex(&l, k), l.childIndex(img, k)
				if i != want || transport.GAddr(n.kids[i]) != l.InnerChild(img, i) {
					t.Fatalf("key size %d, keys %x: %x goes to child %d, want %d", keySize, keys, k, i, want)
				}
				if r, w := n.childRange(&l, i), l.childRange(img, i); !bytes.Equal(r.Lo, w.Lo) || !bytes.Equal(r.Hi, w.Hi) || (r.Hi == nil) != (w.Hi == nil) {
					t.Fatalf("key size %d: child %d's range [%x, %x), want [%x, %x)", keySize, i, r.Lo, r.Hi, w.Lo, w.Hi)
				}
			}
		}
	}
}

// TestCompareKeys checks compareKeys against bytes.Compare on keys of
// every length around a few words, over a small alphabet, so that words
// tie and the bytes past the last whole word decide.
func TestCompareKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	key := func() []byte {
		k := make([]byte, rng.IntN(26))
		for i := range k {
			k[i] = byte(rng.IntN(2))
		}
		return k
	}
	for range 100_000 {
		a, b := key(), key()
		if got, want := compareKeys(a, b), bytes.Compare(a, b); got != want {
			t.Fatalf("compareKeys(%x, %x) = %d, bytes.Compare says %d", a, b, got, want)
		}
	}
}
