package rftree

import (
	"testing"

	"github.com/dmbench/dmbench/transport"
)

// TestTransientInternalNode checks the non-blocking read of the search
// layer (section 3.3.3, Case 1, Figure 4) on every state a reader can see
// while an internal node is rewritten by one WRITE landing in increasing
// address order: the new node's first p bytes and the old node's rest,
// for every 8-byte boundary p. Whatever it reads, the child the reader
// picks for a key must not lie to the right of the key (its low fence,
// or for a merged-away child the low fence of the node it merged into, is
// at or below the key), so that the data layer's sibling pointers lead to
// the key. It also checks that the duplicated-pointer rule is what saves
// the removal: without it, some state sends a key too far right.
func TestTransientInternalNode(t *testing.T) {
	l, err := newLayout(8, 8, 256)
	if err != nil {
		t.Fatal(err)
	}
	x := &Index{l: l}
	child := func(i uint64) transport.GAddr { return transport.Addr(0, 4096+64*i) }
	node := func(keys []uint64, kids []uint64) []byte {
		b := make([]byte, l.nodeBytes)
		l.initNode(b, 1, key(0), nil, 0, 0)
		l.setInnerChild(b, 0, child(kids[0]))
		for i, k := range keys {
			l.innerInsert(b, key(k), child(kids[i+1]))
		}
		return b
	}
	// Children are named by their low fence; 0 is the leftmost.
	old := node([]uint64{10, 20, 30, 40, 50}, []uint64{0, 10, 20, 30, 40, 50})
	cases := []struct {
		name string
		new  []byte
		// low is the low fence a reader reaching child c ends up at.
		low func(c uint64) uint64
	}{
		{"remove 30 (merged into 20)", node([]uint64{10, 20, 40, 50}, []uint64{0, 10, 20, 40, 50}),
			func(c uint64) uint64 {
				if c == 30 {
					return 20 // deleted: its sibling pointer leads to 20
				}
				return c
			}},
		{"insert 35 (split off 30)", node([]uint64{10, 20, 30, 35, 40, 50}, []uint64{0, 10, 20, 30, 35, 40, 50}),
			func(c uint64) uint64 { return c }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			naiveWrong := false
			for p := 0; p <= l.nodeBytes; p += 8 {
				img := append(append([]byte(nil), tc.new[:p]...), old[p:]...)
				n := x.usableKeys(img)
				for k := uint64(1); k < 60; k++ {
					i := x.childFor(img, n, key(k))
					c := (uint64(l.innerChild(img, i)) - 4096) / 64
					if lo := tc.low(c); lo > k {
						t.Errorf("%d bytes landed: key %d goes to the child from %d on", p, k, lo)
					}
					naive := 0 // the same keys, without the rule
					for naive < n && compare(l.innerKey(img, naive), key(k)) <= 0 {
						naive++
					}
					nc := (uint64(l.innerChild(img, naive)) - 4096) / 64
					naiveWrong = naiveWrong || tc.low(nc) > k
				}
			}
			t.Logf("without the duplicated-pointer rule a key goes too far right: %v", naiveWrong)
			if tc.name[:6] == "remove" && !naiveWrong {
				t.Errorf("no state of the removal needs the duplicated-pointer rule: the test does not exercise it")
			}
		})
	}
}
