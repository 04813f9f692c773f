package smart

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dmbench/dmbench/transport"
)

// TestAppendOrder checks that a group orders a node's children as a
// sort of their survivors by path does, equal bytes included.
func TestAppendOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 500 {
		n := 1 + rng.IntN(fanout)
		slots := make([]byte, 8*n)
		for i := range n {
			var e uint64
			switch rng.IntN(4) {
			case 0: // empty
			case 1:
				e = tombstone(byte(rng.IntN(256)))
			default:
				// With few distinct bytes in some rounds, bytes repeat.
				b := byte(rng.IntN(256))
				if round%2 == 1 {
					b = byte(rng.IntN(8))
				}
				e = leafSlot(b, transport.Addr(1, uint64(i+1)<<8), 34)
			}
			binary.LittleEndian.PutUint64(slots[8*i:], e)
		}
		kids := children{a: transport.Addr(1, 1<<20), full: []byte{7, 9}, slots: slots, min: byte(rng.IntN(4)), max: byte(252 + rng.IntN(4))}
		var ar arena
		var want []survivor
		for i := range n {
			if kids.in(i) {
				want = append(want, kids.child(&ar, i))
			}
		}
		slices.SortFunc(want, func(a, b survivor) int { return bytes.Compare(a.path, b.path) })
		order := kids.appendOrder([]uint8{42})
		if len(order) != len(want)+1 || order[0] != 42 {
			t.Fatalf("round %d: %d indices after the first, want %d", round, len(order)-1, len(want))
		}
		for k, i := range order[1:] {
			if got := kids.child(&ar, int(i)); got.h != want[k].h || !bytes.Equal(got.path, want[k].path) {
				t.Fatalf("round %d: child %d is slot %d (%+v), want %+v", round, k, i, got.h, want[k].h)
			}
		}
	}
}
