package indextest

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/anishathalye/porcupine"

	"github.com/dmbench/dmbench/indexes"
)

// Keys are distinct, never all zeros, sorted by Keys, and come in groups
// of 16 that differ only in the last byte; long keys of different groups
// differ before their last 8 bytes.
func TestKey(t *testing.T) {
	for _, size := range []int{8, 24} {
		seen := map[string]bool{}
		zero := make([]byte, size)
		for i := range uint64(100_000) {
			k := Key(i, size)
			if len(k) != size || bytes.Equal(k, zero) || seen[string(k)] {
				t.Fatalf("size %d: key %d = %x: wrong size, zero or repeated", size, i, k)
			}
			seen[string(k)] = true
			first := Key(i&^15, size)
			if !bytes.Equal(k[:size-1], first[:size-1]) {
				t.Errorf("size %d: key %d = %x and key %d = %x differ before the last byte", size, i, k, i&^15, first)
			}
		}
		a, b := Key(0, size), Key(16, size)
		if size > 8 && bytes.Equal(a[:size-8], b[:size-8]) {
			t.Errorf("size %d: keys of two groups %x and %x share their first %d bytes", size, a, b, size-8)
		}
		if ks := Keys(1000, size); !slices.IsSortedFunc(ks, bytes.Compare) {
			t.Errorf("size %d: Keys is not sorted", size)
		}
	}
}

// ValueID recognises Value's values and nothing else: not a value of
// another size, not one torn between two writes.
func TestValueID(t *testing.T) {
	v := Value(42, 16)
	if id, ok := ValueID(v, 16); !ok || id != 42 {
		t.Errorf("ValueID(Value(42)) = %d, %v", id, ok)
	}
	if _, ok := ValueID(v[:8], 16); ok {
		t.Error("a cut value was accepted")
	}
	torn := append(bytes.Clone(v[:8]), Value(43, 16)[8:]...)
	if _, ok := ValueID(torn, 16); ok {
		t.Error("a torn value was accepted")
	}
}

// The model scans from a start key, present or not, up to n entries.
func TestModelScan(t *testing.T) {
	m := newModel()
	for _, i := range []byte{2, 4, 6} {
		m.set([]byte{i}, []byte{i})
	}
	keys := func(es []kv) []byte {
		var out []byte
		for _, e := range es {
			out = append(out, e.key...)
		}
		return out
	}
	for _, c := range []struct {
		start byte
		n     int
		want  []byte
	}{{0, 10, []byte{2, 4, 6}}, {3, 1, []byte{4}}, {4, 2, []byte{4, 6}}, {7, 5, nil}, {0, 0, nil}} {
		if got := keys(m.scan([]byte{c.start}, c.n)); !bytes.Equal(got, c.want) {
			t.Errorf("scan(%d, %d) = %v, want %v", c.start, c.n, got, c.want)
		}
	}
}

// The sequential plan is as big as the doc says: thousands of live keys,
// every kind of operation, replacing inserts and ErrNotFound results.
func TestSequentialPlan(t *testing.T) {
	fx := &fixture{Instance: &Instance{}, p: &planner{m: newModel(), ks: 8, vs: 8}, rng: rand.New(rand.NewPCG(1, 0x1dc5))}
	kinds := map[opKind]int{}
	notFound := 0
	for _, s := range fx.randomSteps(seqOps, seqSpace, 0) {
		kinds[s.kind]++
		if errors.Is(s.err, indexes.ErrNotFound) {
			notFound++
		}
	}
	if live := fx.p.m.len(); live < 3000 || live > 3500 {
		t.Errorf("%d live keys after the sequential plan, want about 3,200", live)
	}
	if len(kinds) != 5 || notFound == 0 {
		t.Errorf("operations %v with %d ErrNotFound results: want all five kinds and some", kinds, notFound)
	}
}

// The register model accepts a linearizable history and rejects a delete
// lost to a concurrent update.
func TestRegisterModel(t *testing.T) {
	op := func(kind opKind, val uint64, notFound bool, call, ret int64) porcupine.Operation {
		return porcupine.Operation{Input: event{kind: kind, val: val, notFound: notFound, call: call, ret: ret}, Call: call, Return: ret}
	}
	legal := []porcupine.Operation{
		op(opInsert, 1, false, 0, 10),
		op(opUpdate, 2, false, 5, 15), // concurrent with the insert: after it
		op(opSearch, 2, false, 20, 30),
		op(opDelete, 0, false, 31, 40),
		op(opUpdate, 3, true, 41, 50),
		op(opSearch, 0, false, 51, 60),
	}
	if r := porcupine.CheckOperations(registerModel(0), legal); !r {
		t.Error("a linearizable history was rejected")
	}
	lost := []porcupine.Operation{
		op(opSearch, 7, false, 0, 1), // the loaded value
		op(opDelete, 0, false, 2, 10),
		op(opUpdate, 2, false, 3, 11),
		op(opSearch, 2, false, 12, 13), // the update outlived the delete
	}
	if porcupine.CheckOperations(registerModel(7), lost) {
		t.Error("a history where an update resurrects a deleted key was accepted")
	}
}

// A timeline offers a scan exactly the contents its key may have had
// during the scan.
func TestTimelineStates(t *testing.T) {
	tl := &timeline{writes: []write{
		{kind: opInsert, val: []byte{1}, call: 10, ret: 20},
		{kind: opUpdate, val: []byte{2}, call: 30, ret: 40},
		{kind: opDelete, call: 50, ret: 60},
	}}
	for _, c := range []struct {
		s, e int64
		want []string
	}{
		{0, 5, []string{"absent"}},
		{0, 15, []string{"absent", "01"}},
		{21, 29, []string{"01"}},
		{25, 55, []string{"01", "02", "absent"}},
		{41, 49, []string{"02"}},
		{61, 70, []string{"absent"}},
	} {
		var got []string
		tl.states(c.s, c.e, func(v []byte) bool {
			if v == nil {
				got = append(got, "absent")
			} else {
				got = append(got, fmt.Sprintf("%02x", v))
			}
			return false
		})
		if !slices.Equal(got, c.want) {
			t.Errorf("states during [%d, %d] = %v, want %v", c.s, c.e, got, c.want)
		}
	}
}

// The checker catches the contract breaches no model sees: a value
// slice reused after it was returned, and fn called after returning
// false. Its reporter tolerates, so that the breaches are counted rather
// than failing this test.
func TestCheckerContract(t *testing.T) {
	rep := &reporter{t: t, paper: "counting"}
	c := newChecker(&sloppyClient{}, rep, "sloppy", 8, 8)
	c.search(Key(1, 8))
	c.search(Key(2, 8))
	if rep.count.Load() != 1 {
		t.Errorf("a reused value slice was reported %d times, want once", rep.count.Load())
	}
	rep.count.Store(0)
	if got, _ := c.scan(Key(1, 8), 5, 2); len(got) != 2 || rep.count.Load() != 1 {
		t.Errorf("scan stopping after 2 returned %d entries and %d reports, want 2 and 1", len(got), rep.count.Load())
	}
}

// sloppyClient returns one buffer for every search and ignores fn's
// answer in scans.
type sloppyClient struct{ buf [8]byte }

func (s *sloppyClient) Search(key []byte) ([]byte, bool, error) {
	copy(s.buf[:], key)
	return s.buf[:], true, nil
}
func (s *sloppyClient) Insert(key, val []byte) error { return nil }
func (s *sloppyClient) Update(key, val []byte) error { return nil }
func (s *sloppyClient) Delete(key []byte) error      { return nil }
func (s *sloppyClient) Scan(start []byte, n int, fn func(key, val []byte) bool) error {
	for i := range n {
		fn(Key(uint64(i), 8), Value(uint64(i), 8))
	}
	return nil
}
