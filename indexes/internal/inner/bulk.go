package inner

import (
	"bytes"
	"fmt"
	"iter"

	"github.com/dmbench/dmbench/transport"
)

// Bulk loading builds a tree bottom-up outside simulated time: the
// leaves, filled to a fraction of their capacity and linked by sibling
// pointers, then each internal level over the one below, then the root
// pointer. The leaves are each index's own; the internal levels are built
// the same way in every B-link tree here.

// Child is a node of the level below the one being built: its low fence
// and address.
type Child struct {
	Low  []byte
	Addr transport.GAddr
}

// BulkFill is how many of card slots a bulk-loaded node fills: fill of
// them, at least one, and at most card-spare, the spare slots being those
// an index needs free in a node at rest (a node that fills up splits).
func BulkFill(fill float64, card, spare int) int {
	return min(max(int(fill*float64(card)), 1), card-spare)
}

// EachPair hands the pairs of kvs to add in order, each with the key of
// the pair before it (nil for the first), after checking it: keys of
// keySize bytes, strictly increasing, and values of valSize bytes. It
// returns how many pairs add took.
func EachPair(kvs iter.Seq2[[]byte, []byte], keySize, valSize int, add func(prev, k, v []byte) error) (int, error) {
	var prev []byte
	n := 0
	for k, v := range kvs {
		if len(k) != keySize || len(v) != valSize {
			return n, fmt.Errorf("key of %d bytes and value of %d, want %d and %d", len(k), len(v), keySize, valSize)
		}
		if prev != nil && bytes.Compare(prev, k) >= 0 {
			return n, fmt.Errorf("keys not increasing at %x after %x", k, prev)
		}
		if err := add(prev, k, v); err != nil {
			return n, err
		}
		n++
		prev = append(prev[:0], k...)
	}
	return n, nil
}

// BuildLevels builds the internal levels over kids, the nodes of the
// level below in key order, per children to a node, up to a root, and
// returns the root and its level (0 when kids is one leaf). It allocates
// the nodes of a level left to right with alloc, then has write fill and
// WRITE each: node a of level lvl over the children group, with high
// fence high (nil: +inf, the last node of the level) and right sibling
// sib, the next node's address, whose low fence high is.
func BuildLevels(kids []Child, per int, alloc func() (transport.GAddr, error),
	write func(a transport.GAddr, lvl int, group []Child, high []byte, sib transport.GAddr) error) (transport.GAddr, int, error) {
	for lvl := 1; ; lvl++ {
		if len(kids) == 1 {
			return kids[0].Addr, lvl - 1, nil
		}
		if lvl >= MaxLevels {
			return 0, 0, errTall
		}
		addrs := make([]transport.GAddr, (len(kids)+per-1)/per)
		for i := range addrs {
			a, err := alloc()
			if err != nil {
				return 0, 0, err
			}
			addrs[i] = a
		}
		up := make([]Child, 0, len(addrs))
		for i, a := range addrs {
			group := kids[i*per : min((i+1)*per, len(kids))]
			var high []byte
			var sib transport.GAddr
			if i+1 < len(addrs) {
				high, sib = kids[(i+1)*per].Low, addrs[i+1]
			}
			if err := write(a, lvl, group, high, sib); err != nil {
				return 0, 0, err
			}
			up = append(up, Child{Low: group[0].Low, Addr: a})
		}
		kids = up
	}
}

// Bulk is a bulk load of a tree of the layer through ep: the index fills
// the leaves left to right, and Bulk links them and builds the levels
// above. A node is written once the address of its right sibling is
// known.
type Bulk struct {
	t    *Tree
	ep   transport.Endpoint
	seal func(img []byte)
	// Leaf is the image of the leaf being filled, and N the entries the
	// index has put into it.
	Leaf   []byte
	N      int
	addr   transport.GAddr
	leaves []Child
	// done holds the leaf Next closes while Start begins the next in
	// Leaf: one buffer for the load, where a copy per leaf was fresh
	// memory for the runtime to clear.
	done []byte
}

// NewBulk starts a bulk load through ep of leaves of leafBytes; seal
// readies a node image for its WRITE.
func (t *Tree) NewBulk(ep transport.Endpoint, leafBytes int, seal func(img []byte)) *Bulk {
	return &Bulk{t: t, ep: ep, seal: seal, Leaf: make([]byte, leafBytes)}
}

// Start begins a leaf with low fence low.
func (b *Bulk) Start(low []byte) error {
	a, err := b.t.allocSetup(b.ep, len(b.Leaf))
	if err != nil {
		return err
	}
	b.t.l.InitNode(b.Leaf, 0, low, nil, 0)
	b.addr, b.N = a, 0
	b.leaves = append(b.leaves, Child{Low: bytes.Clone(low), Addr: a})
	return nil
}

// Next closes the leaf being filled at high fence low and starts the
// next, from low on.
func (b *Bulk) Next(low []byte) error {
	b.done = append(b.done[:0], b.Leaf...)
	prev, img := b.addr, b.done
	if err := b.Start(low); err != nil {
		return err
	}
	b.t.l.SetHigh(img, low)
	setSibling(img, b.addr)
	return b.write(prev, img)
}

// Finish writes the last leaf, builds the internal levels over the
// leaves, per children to a node, and WRITEs the root pointer; every
// compute node forgets the root it knew.
func (b *Bulk) Finish(per int) error {
	if err := b.write(b.addr, b.Leaf); err != nil {
		return err
	}
	l := b.t.l
	img := make([]byte, l.InnerBytes)
	root, lvl, err := BuildLevels(b.leaves, per,
		func() (transport.GAddr, error) { return b.t.allocSetup(b.ep, l.InnerBytes) },
		func(a transport.GAddr, lvl int, group []Child, high []byte, sib transport.GAddr) error {
			l.InitNode(img, lvl, group[0].Low, high, sib)
			l.setInnerChild(img, 0, group[0].Addr)
			for _, g := range group[1:] {
				l.insertInner(img, g.Low, g.Addr)
			}
			return b.write(a, img)
		})
	if err != nil {
		return err
	}
	if err := WriteRoot(b.ep, b.t.RootPtr, root, lvl); err != nil {
		return err
	}
	for i := range b.t.roots {
		b.t.roots[i].Store(nil)
	}
	return nil
}

func (b *Bulk) write(a transport.GAddr, img []byte) error {
	b.seal(img)
	if err := b.ep.Write(a, img); err != nil {
		return fmt.Errorf("writing node %v: %w", a, err)
	}
	return nil
}
