package smart

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"

	"github.com/dmbench/dmbench/transport"
)

// BulkLoad builds the tree of kvs (increasing keys) into an empty index
// through ep, outside simulated time: the radix tree the artifact's
// loading inserts would leave, each node of the smallest type that holds
// its children (of the 256-slot type with variant=dex), prefixes
// compressed up to 6 bytes per node.
func (x *Index) BulkLoad(ep transport.Endpoint, kvs iter.Seq2[[]byte, []byte]) error {
	// The records' keys and values, each of a fixed size, back to back:
	// two growing slices of bytes, where a slice per record would be
	// copied at every growth and scanned by the garbage collector.
	var keys, vals []byte
	n := 0
	for k, v := range kvs {
		if len(k) != x.ll.ks || len(v) != x.ll.vs {
			return fmt.Errorf("smart: bulk load: key of %d and value of %d bytes, want %d and %d", len(k), len(v), x.ll.ks, x.ll.vs)
		}
		if prev := keys[max(len(keys)-len(k), 0):]; n > 0 && bytes.Compare(prev, k) >= 0 {
			return fmt.Errorf("smart: bulk load: keys not increasing at %x after %x", k, prev)
		}
		keys = append(keys, k...)
		vals = append(vals, v...)
		n++
	}
	var b [8]byte
	if err := ep.Read(b[:], x.rootPtr); err != nil {
		return fmt.Errorf("smart: bulk load: reading the root slot: %w", err)
	}
	if binary.LittleEndian.Uint64(b[:]) != 0 {
		return errors.New("smart: bulk load into a tree that is not empty")
	}
	if n == 0 {
		return nil
	}
	l := loader{x: x, ep: ep, keys: keys, vals: vals}
	root, err := l.build(0, n, 0, x.rootPtr)
	if err != nil {
		return fmt.Errorf("smart: bulk load: %w", err)
	}
	binary.LittleEndian.PutUint64(b[:], root)
	if err := ep.Write(x.rootPtr, b[:]); err != nil {
		return fmt.Errorf("smart: bulk load: writing the root slot: %w", err)
	}
	return nil
}

type loader struct {
	x          *Index
	ep         transport.Endpoint
	keys, vals []byte // the records' keys and values back to back
}

// key and val are record i's key and value.
func (l *loader) key(i int) []byte { return l.keys[i*l.x.ll.ks : (i+1)*l.x.ll.ks] }
func (l *loader) val(i int) []byte { return l.vals[i*l.x.ll.vs : (i+1)*l.x.ll.vs] }

func (l *loader) alloc(size uint64) (transport.GAddr, error) {
	return l.x.setupMem.Alloc(l.ep, size, allocAlign)
}

// build writes the subtree of keys[lo:hi], which agree on their first
// depth bytes, under the slot at rev and returns the slot's value
// (partial key 0: the caller sets it).
func (l *loader) build(lo, hi, depth int, rev transport.GAddr) (uint64, error) {
	x := l.x
	if hi-lo == 1 {
		a, err := l.alloc(x.ll.alloc)
		if err != nil {
			return 0, err
		}
		x.leaves.Add(1)
		if err := l.ep.Write(a, x.ll.encode(rev, l.key(lo), l.val(lo), true, 0)); err != nil {
			return 0, err
		}
		return leafSlot(0, a, x.ll.size), nil
	}
	first, last := l.key(lo), l.key(hi-1)
	diff := depth
	for first[diff] == last[diff] {
		diff++
	}
	a, err := l.alloc(roundAlloc(nodeBytes))
	if err != nil {
		return 0, err
	}
	x.inners.Add(1)
	plen := min(diff-depth, maxPrefix)
	h := header{depth: depth, plen: plen}
	copy(h.prefix[:], first[depth:depth+plen])
	var slots []uint64
	if d := depth + plen; d < diff {
		// The common prefix is longer than a header holds: one slot
		// leads to the next node of the chain.
		child, err := l.build(lo, hi, d+1, slotAddr(a, 0))
		if err != nil {
			return 0, err
		}
		slots = []uint64{withPartial(child, first[d])}
	} else {
		for i := lo; i < hi; {
			j := i + 1
			for j < hi && l.key(j)[diff] == l.key(i)[diff] {
				j++
			}
			child, err := l.build(i, j, diff+1, slotAddr(a, len(slots)))
			if err != nil {
				return 0, err
			}
			slots = append(slots, withPartial(child, l.key(i)[diff]))
			i = j
		}
	}
	h.typ = typeFor(len(slots) - 1)
	if x.dex {
		h.typ = numTypes - 1
	}
	full := make([]uint64, capacity(h.typ))
	copy(full, slots)
	if err := l.ep.Write(a, encodeNode(rev, h, full)); err != nil {
		return 0, err
	}
	return nodeSlot(0, a, h.typ), nil
}
