package inner

import (
	"bytes"
	"math/rand/v2"
	"reflect"
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

// TestCacheCopy checks that a cache copied from one that ran some inserts
// and lookups equals a cache that ran them itself, node for node and run
// for run, and goes on behaving as it would, apart from the original; and
// that a cache that has evicted is not copied.
func TestCacheCopy(t *testing.T) {
	l := testLayout(8)
	// node is the image of the level-lvl node covering [lo, lo+10) with a
	// child per key.
	node := func(lvl int, lo uint64) []byte {
		img := make([]byte, l.InnerBytes)
		l.InitNode(img, lvl, key(lo), key(lo+10), 0)
		l.setInnerChild(img, 0, transport.GAddr(lo+1)<<6)
		for k := lo + 1; k < lo+8; k++ {
			l.insertInner(img, key(k), transport.GAddr(k+1)<<6)
		}
		return img
	}
	// run inserts nodes of alternating levels into nc, each a second time
	// (a replaced copy), looks keys up, counting hits, and drops a node:
	// the same operations for every nc, with evictions drawn from seed.
	run := func(nc *nodeCache, seed uint64, nodes int) {
		ops, evict := rand.New(rand.NewPCG(0, 0)), rand.New(rand.NewPCG(seed, 0))
		for i := range uint64(nodes) {
			for _, j := range []uint64{i, i / 2} {
				nc.insert(transport.GAddr(j+1000)<<6, node(1+int(j%2), j*10), evict)
			}
			for range 3 {
				nc.lookups.Add(1) // as a client counts them
				if nc.lookup(1+ops.IntN(2), key(ops.Uint64N(uint64(nodes)*10))) != nil {
					nc.hits.Add(1)
				}
			}
		}
		if n := nc.lookup(1, key(0)); n != nil {
			nc.invalidate(n)
		}
	}
	same := func(a, b *nodeCache) bool {
		return reflect.DeepEqual(a.levels, b.levels) && reflect.DeepEqual(a.all, b.all) &&
			a.evicted == b.evicted && a.hits.Load() == b.hits.Load() && a.lookups.Load() == b.lookups.Load()
	}
	const budget = 40
	caches := make([]*nodeCache, 4)
	for i := range caches {
		caches[i] = newNodeCache(&l, budget*uint64(l.InnerBytes))
	}
	from, twin, searched, copied := caches[0], caches[1], caches[2], caches[3]
	run(from, 1, budget-4)
	run(twin, 1, budget-4)
	run(searched, 2, budget-4)
	if !copied.copyFrom(from) {
		t.Fatal("a cache that never evicted was not copied")
	}
	if !same(copied, searched) || len(copied.all) == 0 {
		t.Fatal("the copy differs from a cache that ran the same operations")
	}
	// Evicting, with the same randomness, and the original left as it was.
	run(copied, 3, budget+10)
	run(searched, 3, budget+10)
	if !same(copied, searched) {
		t.Error("the copy went on differently from a cache that ran the same operations")
	}
	if from.copyFrom(copied) {
		t.Error("a cache that evicted was copied")
	}
	if !same(from, twin) {
		t.Error("the copy's operations, or a copy refused, changed the original")
	}
}
