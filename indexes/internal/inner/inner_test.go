package inner

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/dmbench/dmbench/transport"
)

func key(i uint64) []byte { return binary.BigEndian.AppendUint64(nil, i) }

// testLayout has internal nodes of card keys with 8-byte keys.
func testLayout(card int) Layout {
	hdr := HeaderBytes(8)
	return NewLayout(8, hdr, hdr+card*16+1, card)
}

// TestInternalNode fills an internal node in scrambled order and checks
// that it is sorted, routes every key to the child covering it, and
// splits into two halves that route the same keys.
func TestInternalNode(t *testing.T) {
	l := testLayout(8)
	img := make([]byte, l.InnerBytes)
	l.InitNode(img, 1, key(0), key(1000), 7<<6)
	l.setInnerChild(img, 0, 1<<6)
	for _, k := range []uint64{500, 100, 700, 300, 200, 600, 400, 800} {
		l.insertInner(img, key(k), transport.GAddr(k<<6))
	}
	l.insertInner(img, key(300), 3000<<6) // repoints, adds no key
	if Count(img) != 8 {
		t.Fatalf("count %d, want 8", Count(img))
	}
	// child returns the child of key k in a node image, as a traversal
	// picks it.
	child := func(img []byte, k uint64) transport.GAddr { return l.InnerChild(img, l.childIndex(img, key(k))) }
	want := map[uint64]transport.GAddr{0: 1 << 6, 99: 1 << 6, 100: 100 << 6, 299: 200 << 6, 300: 3000 << 6, 999: 800 << 6}
	for k, a := range want {
		if got := child(img, k); got != a {
			t.Errorf("key %d goes to %v, want %v", k, got, a)
		}
	}
	if r := l.childRange(img, 3); !bytes.Equal(r.Lo, key(300)) || !bytes.Equal(r.Hi, key(400)) || !r.Known {
		t.Errorf("child 3's range [%x, %x), want [300, 400)", r.Lo, r.Hi)
	}

	old, sib := make([]byte, l.InnerBytes), make([]byte, l.InnerBytes)
	up := l.splitInner(img, old, sib, 9<<6)
	if !bytes.Equal(up, key(500)) || Count(old) != 4 || Count(sib) != 3 {
		t.Fatalf("split at %x into %d and %d keys, want 500 into 4 and 3", up, Count(old), Count(sib))
	}
	if !bytes.Equal(l.High(old), up) || Sibling(old) != 9<<6 || !bytes.Equal(l.Low(sib), up) ||
		!bytes.Equal(l.HighOrNil(sib), key(1000)) || Sibling(sib) != 7<<6 || Level(sib) != 1 {
		t.Errorf("split halves' fences and siblings are wrong")
	}
	for k, a := range want {
		half := old
		if k >= 500 {
			half = sib
		}
		if !l.Covers(half, key(k)) || child(half, k) != a {
			t.Errorf("after the split key %d goes to %v, want %v", k, child(half, k), a)
		}
	}
}

// TestBuildLevels builds the internal levels over leaves and checks every
// node's children, fences and sibling, level by level.
func TestBuildLevels(t *testing.T) {
	for _, tc := range []struct{ leaves, per, levels int }{
		{1, 4, 0}, {2, 4, 1}, {4, 4, 1}, {5, 4, 2}, {16, 4, 2}, {17, 4, 3}, {100, 3, 5},
	} {
		t.Run(fmt.Sprintf("%d/%d", tc.leaves, tc.per), func(t *testing.T) {
			kids := make([]Child, tc.leaves)
			for i := range kids {
				kids[i] = Child{Low: key(uint64(i) * 10), Addr: transport.GAddr(i+1) << 6}
			}
			next := transport.GAddr(len(kids)+1) << 6
			// Nodes are allocated at increasing addresses, so a level's
			// nodes in address order are its nodes left to right.
			type node struct {
				lvl   int
				group []Child
				high  []byte
				sib   transport.GAddr
			}
			nodes := map[transport.GAddr]*node{}
			root, lvl, err := BuildLevels(kids, tc.per,
				func() (transport.GAddr, error) {
					a := next
					next += 1 << 6
					nodes[a] = &node{}
					return a, nil
				},
				func(a transport.GAddr, lvl int, group []Child, high []byte, sib transport.GAddr) error {
					n := nodes[a]
					n.lvl, n.group, n.high, n.sib = lvl, slices.Clone(group), high, sib
					return nil
				})
			if err != nil || lvl != tc.levels {
				t.Fatalf("root at level %d (%v), want %d", lvl, err, tc.levels)
			}
			level := kids
			for l := 1; l <= lvl; l++ {
				var up []Child
				for _, a := range slices.Sorted(maps.Keys(nodes)) {
					if n := nodes[a]; n.lvl == l {
						up = append(up, Child{Low: n.group[0].Low, Addr: a})
					}
				}
				i := 0
				for j, c := range up {
					n := nodes[c.Addr]
					if len(n.group) == 0 || len(n.group) > tc.per || !slices.EqualFunc(n.group, level[i:i+len(n.group)], func(a, b Child) bool { return a.Addr == b.Addr }) {
						t.Fatalf("level %d node %d has children %v", l, j, n.group)
					}
					i += len(n.group)
					last := j == len(up)-1
					if last != (n.high == nil) || last != (n.sib == 0) || !last && (n.sib != up[j+1].Addr || !bytes.Equal(n.high, up[j+1].Low)) {
						t.Errorf("level %d node %d: high %x, sibling %v", l, j, n.high, n.sib)
					}
				}
				if i != len(level) {
					t.Fatalf("level %d holds %d of %d children", l, i, len(level))
				}
				level = up
			}
			if len(level) != 1 || level[0].Addr != root {
				t.Errorf("root %v, top level %v", root, level)
			}
		})
	}
}

func TestBulkFill(t *testing.T) {
	for _, tc := range []struct {
		fill              float64
		card, spare, want int
	}{
		{0.75, 64, 2, 48}, {1, 64, 2, 62}, {1, 61, 1, 60}, {1, 61, 0, 61}, {0.01, 61, 1, 1},
	} {
		if got := BulkFill(tc.fill, tc.card, tc.spare); got != tc.want {
			t.Errorf("BulkFill(%v, %d, %d) = %d, want %d", tc.fill, tc.card, tc.spare, got, tc.want)
		}
	}
}

func TestEachPair(t *testing.T) {
	pairs := func(ks ...uint64) func(func([]byte, []byte) bool) {
		return func(yield func([]byte, []byte) bool) {
			for _, k := range ks {
				if !yield(key(k), key(k+1)) {
					return
				}
			}
		}
	}
	for _, tc := range []struct {
		name string
		keys []uint64
		n    int
		err  string
	}{
		{"empty", nil, 0, ""},
		{"increasing", []uint64{1, 2, 5}, 3, ""},
		{"repeated", []uint64{1, 2, 2}, 2, "not increasing"},
		{"decreasing", []uint64{3, 1}, 1, "not increasing"},
	} {
		var prevs [][]byte
		n, err := EachPair(pairs(tc.keys...), 8, 8, func(prev, k, v []byte) error {
			prevs = append(prevs, bytes.Clone(prev))
			return nil
		})
		if n != tc.n || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %d pairs, %v; want %d, %q", tc.name, n, err, tc.n, tc.err)
		}
		for i := 1; i < len(prevs); i++ {
			if !bytes.Equal(prevs[i], key(tc.keys[i-1])) {
				t.Errorf("%s: pair %d follows %x, want %d", tc.name, i, prevs[i], tc.keys[i-1])
			}
		}
		if len(prevs) > 0 && prevs[0] != nil {
			t.Errorf("%s: the first pair follows %x, want nil", tc.name, prevs[0])
		}
	}
	if _, err := EachPair(pairs(1), 8, 4, func(prev, k, v []byte) error { return nil }); err == nil {
		t.Error("a value of the wrong size was taken")
	}
}

func TestRootWord(t *testing.T) {
	for _, lvl := range []int{0, 1, MaxLevels - 1} {
		a := transport.GAddr(3<<48 | 12345<<6)
		if got, gotLvl := DecodeRoot(RootWord(a, lvl)); got != a || gotLvl != lvl {
			t.Errorf("root %v level %d decodes as %v level %d", a, lvl, got, gotLvl)
		}
	}
}
