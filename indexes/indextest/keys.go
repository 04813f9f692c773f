package indextest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"iter"
	"slices"

	"github.com/google/btree"

	"github.com/dmbench/dmbench/internal/splitmix"
)

// Key returns key number i of a size-byte key space (size >= 8). Keys come
// in groups of 16 consecutive numbers that differ only in their last byte,
// the groups scattered over the key space: a group exercises shared
// prefixes (radix-tree path compression, neighbouring entries of one leaf)
// and the scattering exercises the whole space. In keys longer than 8
// bytes the bytes before the last 8 are filler derived from the group, so
// two groups differ early and two keys of a group differ only at the end:
// an index that compares part of a key mixes them up. Key numbers do not
// give key order: sort the keys. No key is all zeros.
func Key(i uint64, size int) []byte {
	if size < 8 {
		panic(fmt.Sprintf("indextest: key size %d: keys need at least 8 bytes", size))
	}
	k := make([]byte, size)
	g := i >> 4
	splitmix.Fill(k[:size-8], g)
	binary.BigEndian.PutUint64(k[size-8:], splitmix.Mix(g+1)&^0xff|i&0xf)
	return k
}

// Value returns the size-byte value (size >= 8) with id: the id in the
// first 8 bytes (big-endian), filler derived from it in the rest, so a
// value torn between two writes or cut short is recognised (ValueID).
func Value(id uint64, size int) []byte {
	if size < 8 {
		panic(fmt.Sprintf("indextest: value size %d: values need at least 8 bytes", size))
	}
	v := make([]byte, size)
	binary.BigEndian.PutUint64(v, id)
	splitmix.Fill(v[8:], id^0x6a09e667f3bcc908)
	return v
}

// ValueID returns the id of a value made by Value, and false if v is not
// such a value of size bytes.
func ValueID(v []byte, size int) (uint64, bool) {
	if len(v) != size || size < 8 {
		return 0, false
	}
	id := binary.BigEndian.Uint64(v)
	return id, bytes.Equal(v, Value(id, size))
}

// Keys returns keys numbered 0..n-1 of size bytes, sorted.
func Keys(n, size int) [][]byte {
	ks := make([][]byte, n)
	for i := range ks {
		ks[i] = Key(uint64(i), size)
	}
	slices.SortFunc(ks, bytes.Compare)
	return ks
}

// kv is one entry.
type kv struct {
	key, val []byte
}

func (e kv) String() string { return fmt.Sprintf("%x=%x", e.key, e.val) }

// model is the sorted map an index must behave like.
type model struct {
	t *btree.BTreeG[kv]
}

func newModel() *model {
	return &model{t: btree.NewG(16, func(a, b kv) bool { return bytes.Compare(a.key, b.key) < 0 })}
}

func (m *model) get(k []byte) ([]byte, bool) {
	e, ok := m.t.Get(kv{key: k})
	return e.val, ok
}

func (m *model) set(k, v []byte) { m.t.ReplaceOrInsert(kv{key: k, val: v}) }

func (m *model) del(k []byte) bool {
	_, ok := m.t.Delete(kv{key: k})
	return ok
}

func (m *model) len() int { return m.t.Len() }

// scan lists up to n entries from start on.
func (m *model) scan(start []byte, n int) []kv {
	var out []kv
	if n <= 0 {
		return nil
	}
	m.t.AscendGreaterOrEqual(kv{key: start}, func(e kv) bool {
		out = append(out, e)
		return len(out) < n
	})
	return out
}

// sortedCopy returns keys sorted, leaving keys as they are.
func sortedCopy(keys [][]byte) [][]byte {
	s := slices.Clone(keys)
	slices.SortFunc(s, bytes.Compare)
	return s
}

// Pairs yields key(i), val(i) for i = 0..n-1: the bulk load of a golden
// verb test, whose keys are chosen to land at known places in the index.
func Pairs(n uint64, key, val func(i uint64) []byte) iter.Seq2[[]byte, []byte] {
	return func(yield func([]byte, []byte) bool) {
		for i := range n {
			if !yield(key(i), val(i)) {
				return
			}
		}
	}
}
