package ideal

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dmbench/dmbench/transport"
)

// The directory finds every key it holds, lists them in byte order from
// any start (keys that agree on their first 16 bytes included), and grows
// past the size it was made for.
func TestDirectoryOrderAndLookup(t *testing.T) {
	const klen = 24
	d := newDirectory(klen, 10)
	r := rand.New(rand.NewPCG(1, 2))
	var keys [][]byte
	for i := range 5000 {
		k := make([]byte, klen)
		binary.BigEndian.PutUint64(k, r.Uint64N(50)) // many shared prefixes
		binary.BigEndian.PutUint64(k[16:], r.Uint64())
		if d.put(k, entry{addr: transport.GAddr(i), live: true}) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, bytes.Compare)
	for i, k := range keys {
		e, ok := d.get(k)
		if !ok || !e.live {
			t.Fatalf("key %x not found", k)
		}
		for _, inclusive := range []bool{true, false} {
			want := i
			if !inclusive {
				want++
			}
			var got [][]byte
			d.ascend(k, inclusive, func(key []byte, _ entry) bool {
				got = append(got, bytes.Clone(key))
				return len(got) < 3
			})
			for j, g := range got {
				if !bytes.Equal(g, keys[want+j]) {
					t.Fatalf("ascend from %x (inclusive %v): item %d is %x, want %x", k, inclusive, j, g, keys[want+j])
				}
			}
			if wantLen := min(3, len(keys)-want); len(got) != wantLen {
				t.Fatalf("ascend from %x: %d keys, want %d", k, len(got), wantLen)
			}
		}
	}
	if _, ok := d.get(make([]byte, klen)); ok {
		t.Error("found a key never put")
	}
	if _, ok := d.get([]byte("short")); ok {
		t.Error("found a key of the wrong length")
	}
}
