package workloads

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dmbench/dmbench/internal/splitmix"
)

// specWith builds a small read-only Spec with props on top.
func specWith(t testing.TB, props Properties) *Spec {
	t.Helper()
	all := Properties{"recordcount": "10000", "readproportion": "1", "updateproportion": "0", "fieldcount": "1", "fieldlength": "8"}
	for k, v := range props {
		all[k] = v
	}
	s, err := FromProperties("test.properties", all, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRecordsAreSortedAndComplete(t *testing.T) {
	cases := []struct {
		name    string
		props   Properties
		perPass int64
	}{
		{"empty", Properties{"recordcount": "0", "readproportion": "0", "insertproportion": "1"}, 100},
		{"one record", Properties{"recordcount": "1"}, 100},
		{"one pass", Properties{"recordcount": "5000"}, recordsPerPass},
		{"64 passes", Properties{"recordcount": "5000"}, 100},
		{"24-byte keys, uneven passes", Properties{"recordcount": "4999", "keysize": "24"}, 333},
		{"odd key size, long values", Properties{"recordcount": "3000", "keysize": "13", "fieldlength": "20", "fieldcount": "3"}, 1000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := specWith(t, c.props)
			want := make(map[string]bool, s.RecordCount)
			for rec := range s.RecordCount {
				want[string(s.Key(rec))] = true
			}
			var prev []byte
			count := int64(0)
			for key, value := range s.records(c.perPass) {
				if len(key) != s.KeySize || len(value) != s.ValueSize() {
					t.Fatalf("key of %d bytes, value of %d; want %d and %d", len(key), len(value), s.KeySize, s.ValueSize())
				}
				if prev != nil && bytes.Compare(prev, key) >= 0 {
					t.Fatalf("record %d: key %x does not follow %x", count, key, prev)
				}
				if !want[string(key)] {
					t.Fatalf("record %d: key %x is not the key of any loaded record", count, key)
				}
				prev = bytes.Clone(key)
				count++
			}
			if count != s.RecordCount {
				t.Errorf("enumerated %d records, want %d", count, s.RecordCount)
			}
		})
	}
}

func TestRecordsPublicIteratorAndEarlyStop(t *testing.T) {
	s := specWith(t, Properties{"recordcount": "2000"})
	recs, err := s.Records()
	if err != nil {
		t.Fatal(err)
	}
	first := map[string]string{}
	for key, value := range recs {
		first[string(key)] = string(value)
		if len(first) == 10 {
			break
		}
	}
	// The values depend on the key alone, so another pass split agrees.
	seen := 0
	for key, value := range s.records(50) {
		if v, ok := first[string(key)]; ok {
			seen++
			if v != string(value) {
				t.Errorf("key %x: value %x, then %x", key, v, value)
			}
		}
	}
	if seen != 10 {
		t.Errorf("found %d of the first 10 keys again, want 10", seen)
	}
}

// unmix inverts splitmix.Mix: xor-shifts by s are undone by repeating them, the
// multiplications by multiplying with the inverse modulo 2^64.
func unmix(x uint64) uint64 {
	inverse := func(c uint64) uint64 {
		inv := c // Newton's iteration doubles the correct low bits each step
		for range 5 {
			inv *= 2 - c*inv
		}
		return inv
	}
	unshift := func(y uint64, s uint) uint64 {
		x := y
		for range 64/s + 1 {
			x = y ^ (x >> s)
		}
		return x
	}
	x = unshift(x, 31)
	x = unshift(x*inverse(0x94d049bb133111eb), 27)
	return unshift(x*inverse(0xbf58476d1ce4e5b9), 30)
}

func TestKeyMappingIsABijectionAvoidingSentinels(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for range 10000 {
		x := r.Uint64()
		if unmix(splitmix.Mix(x)) != x {
			t.Fatalf("unmix(splitmix.Mix(%#x)) = %#x: mix is not inverted", x, unmix(splitmix.Mix(x)))
		}
	}
	if splitmix.Mix(0) != 0 {
		t.Errorf("splitmix.Mix(0) = %#x, want 0 (so that record numbers, shifted by one, never map to 0)", splitmix.Mix(0))
	}
	// Record numbers are int64s from 0; the all-zero and all-ones prefixes
	// belong to numbers of 2^63 and above, so neither key ever occurs.
	for _, prefix := range []uint64{0, math.MaxUint64} {
		if rec := unmix(prefix) - 1; rec < 1<<63 {
			t.Errorf("the prefix %#x belongs to record %d", prefix, rec)
		}
	}
	s := specWith(t, Properties{"keysize": "24"})
	zero := make([]byte, 24)
	for rec := range int64(100000) {
		if bytes.Equal(s.Key(rec)[:8], zero[:8]) {
			t.Fatalf("record %d has a zero key prefix", rec)
		}
	}
}

func TestPartitionsSplitTheKeySpaceEvenly(t *testing.T) {
	for _, order := range []string{"hashed", "ordered", "permuted"} {
		for _, keySize := range []string{"8", "24"} {
			s := specWith(t, Properties{"recordcount": "20000", "insertorder": order, "keysize": keySize,
				"readproportion": "0.9", "insertproportion": "0.1", "operationcount": "5000"})
			t.Run(order+"/"+keySize, func(t *testing.T) { checkPartitions(t, s) })
		}
	}
}

func checkPartitions(t *testing.T, s *Spec) {
	for _, nodes := range []int{1, 2, 3, 4, 7} {
		ranges, err := s.Partitions(nodes)
		if err != nil {
			t.Fatal(err)
		}
		if len(ranges) != nodes || !bytes.Equal(ranges[0].Start, make([]byte, s.KeySize)) || ranges[nodes-1].End != nil {
			t.Fatalf("%d nodes: ranges %x, want %d ranges from the zero key to the end", nodes, ranges, nodes)
		}
		for c := 1; c < nodes; c++ {
			if !bytes.Equal(ranges[c-1].End, ranges[c].Start) {
				t.Errorf("%d nodes: range %d ends at %x, range %d starts at %x", nodes, c-1, ranges[c-1].End, c, ranges[c].Start)
			}
			start := s.partitionStart(c, nodes)
			if s.partitionOf(start, nodes) != c || s.partitionOf(start-1, nodes) != c-1 {
				t.Errorf("%d nodes: partition %d starts at %#x, which partitionOf puts in %d (and %d before it)",
					nodes, c, start, s.partitionOf(start, nodes), s.partitionOf(start-1, nodes))
			}
		}
		counts := make([]int64, nodes)
		for rec := range s.RecordCount + 100 {
			key := s.Key(rec)
			c := s.partitionOf(s.keyNumber(rec), nodes)
			if !ranges[c].Contains(key) {
				t.Fatalf("%d nodes: record %d is in partition %d but outside its range", nodes, rec, c)
			}
			if rec < s.RecordCount {
				counts[c]++
			}
		}
		if !slices.Equal(counts, partitionRecords(s, nodes)) {
			t.Errorf("%d nodes: partitionRecords = %v, counted %v", nodes, partitionRecords(s, nodes), counts)
		}
		for c, n := range counts {
			if even := s.RecordCount / int64(nodes); math.Abs(float64(n-even)) > 0.1*float64(even) {
				t.Errorf("%d nodes: partition %d holds %d records, more than 10%% away from %d", nodes, c, n, even)
			}
		}
	}
	if _, err := s.Partitions(0); err == nil {
		t.Error("Partitions(0) succeeded")
	}
}

func TestSortSpread(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for _, topBits := range []uint{0, 3} {
		for _, n := range []int{0, 1, 7, 100, 5000} {
			src := make([]uint64, n)
			for i := range src {
				src[i] = 5<<(64-topBits) | r.Uint64()>>topBits
				if topBits == 0 {
					src[i] = r.Uint64()
				}
			}
			want := slices.Sorted(slices.Values(src))
			if got := sortSpread(nil, src, topBits); !slices.Equal(got, want) {
				t.Errorf("topBits %d, %d values: sortSpread disagrees with slices.Sort", topBits, n)
			}
		}
	}
}

// TestZetaMatchesTheSum compares the cached zeta (exact head plus
// Euler-Maclaurin tail) with a compensated sum of every term.
func TestZetaMatchesTheSum(t *testing.T) {
	for _, theta := range []float64{0.2, 0.5, 0.99} {
		for _, n := range []int64{1, 10, zetaExactItems, zetaExactItems + 1, 1_000_000} {
			var sum, carry float64 // Kahan summation
			for i := range n {
				y := 1/math.Pow(float64(i+1), theta) - carry
				next := sum + y
				carry = (next - sum) - y
				sum = next
			}
			if got := zeta(n, theta); math.Abs(got-sum) > 1e-12*sum {
				t.Errorf("zeta(%d, %v) = %.17g, the sum is %.17g", n, theta, got, sum)
			}
		}
	}
}

// onePast stands in for go-ycsb's Zipfian returning one past its range.
type onePast struct{ values []int64 }

func (g *onePast) Next(*rand.Rand) int64 {
	v := g.values[0]
	g.values = g.values[1:]
	return v
}

func (g *onePast) Last() int64 { return 0 }

func TestBelowDrawsAgainPastTheRange(t *testing.T) {
	c := below{gen: &onePast{values: []int64{10, 10, 9}}, limit: 10}
	if got := c.next(nil); got != 9 {
		t.Errorf("below drew %d, want the first value under 10", got)
	}
}

func TestKeyBytesAreBigEndianPrefix(t *testing.T) {
	s := specWith(t, Properties{"keysize": "24"})
	key := s.Key(42)
	if got := binary.BigEndian.Uint64(key); got != keyPrefix(42) {
		t.Errorf("key prefix %#x, want %#x", got, keyPrefix(42))
	}
	if bytes.Equal(key[8:], make([]byte, 16)) {
		t.Error("bytes 8..24 of a 24-byte key are zero, want filler")
	}
}

func TestOrderedKeysAreDenseIntegers(t *testing.T) {
	for _, size := range []int{8, 13, 24} {
		s := specWith(t, Properties{"insertorder": "ordered", "keysize": strconv.Itoa(size), "recordcount": "1000"})
		for _, rec := range []int64{0, 1, 254, 255, 256, 999, 1000, 1 << 40} {
			key := s.Key(rec)
			want := make([]byte, size)
			binary.BigEndian.PutUint64(want[size-8:], uint64(rec)+1)
			if !bytes.Equal(key, want) {
				t.Errorf("%d-byte key of record %d = %x, want %x", size, rec, key, want)
			}
		}
		// Consecutive records share all but the last byte, except where
		// the last byte wraps; none is the all-zero or all-ones key.
		for rec := range int64(1000) {
			a, b := s.Key(rec), s.Key(rec+1)
			if bytes.Compare(a, b) >= 0 {
				t.Fatalf("key %x of record %d does not precede %x", a, rec, b)
			}
			if (rec+2)%256 != 0 && !bytes.Equal(a[:size-1], b[:size-1]) {
				t.Errorf("records %d and %d differ before the last byte: %x, %x", rec, rec+1, a, b)
			}
			if bytes.Equal(a, make([]byte, size)) || bytes.Equal(a, bytes.Repeat([]byte{0xff}, size)) {
				t.Errorf("record %d has a sentinel key %x", rec, a)
			}
		}
		// Records enumerates them in key order with the values of their keys.
		rec := int64(0)
		for key, value := range s.records(recordsPerPass) {
			if !bytes.Equal(key, s.Key(rec)) || len(value) != s.ValueSize() {
				t.Fatalf("record %d: key %x (want %x), %d-byte value", rec, key, s.Key(rec), len(value))
			}
			rec++
		}
		if rec != s.RecordCount {
			t.Errorf("enumerated %d records, want %d", rec, s.RecordCount)
		}
	}
}

func TestPermutationIsABijection(t *testing.T) {
	for _, n := range []uint64{1, 2, 3, 5, 255, 256, 1000, 4097} {
		p := newPermutation(n)
		seen := make([]bool, n)
		moved := 0
		for x := range n {
			y := p.forward(x)
			if y >= n || seen[y] {
				t.Fatalf("n=%d: forward(%d) = %d, out of range or taken twice", n, x, y)
			}
			seen[y] = true
			if p.inverse(y) != x {
				t.Fatalf("n=%d: inverse(forward(%d)) = %d", n, x, p.inverse(y))
			}
			if y != x {
				moved++
			}
		}
		if n >= 255 && moved < int(n)*9/10 {
			t.Errorf("n=%d: only %d numbers move; want a scattering permutation", n, moved)
		}
	}
}

// DEX's benchmark keys are (CityHash64(rank)+1) mod keyspace: dense
// integers with the records (and so the Zipfian ranks) scattered among
// them, inserts falling between loaded keys.
func TestPermutedKeysAreDenseAndScattered(t *testing.T) {
	s := specWith(t, Properties{"insertorder": "permuted", "keysize": "8", "recordcount": "10000",
		"readproportion": "0.5", "insertproportion": "0.5", "operationcount": "4000"})
	space := s.permutedSpace()
	if want := uint64(10000 + 2000 + 500 + 1024); space != want {
		t.Fatalf("permuted space %d, want %d (records, inserts, a quarter and 1024 spare)", space, want)
	}
	seen := map[uint64]bool{}
	for rec := range int64(space) + 10 {
		n := binary.BigEndian.Uint64(s.Key(rec))
		if n == 0 || seen[n] {
			t.Fatalf("record %d has key number %d: zero or taken", rec, n)
		}
		seen[n] = true
		if rec < int64(space) && n > space {
			t.Fatalf("record %d has key number %d past the space %d", rec, n, space)
		}
	}
	// The ten hottest ranks are not neighbours.
	if n0, n1 := binary.BigEndian.Uint64(s.Key(0)), binary.BigEndian.Uint64(s.Key(1)); n1 == n0+1 {
		t.Errorf("records 0 and 1 have consecutive keys %d, %d", n0, n1)
	}
	// Records enumerates the loaded keys in order, each of a loaded record.
	loaded := map[string]bool{}
	for rec := range s.RecordCount {
		loaded[string(s.Key(rec))] = true
	}
	var prev []byte
	count := 0
	for key := range s.records(recordsPerPass) {
		if !loaded[string(key)] || prev != nil && bytes.Compare(prev, key) >= 0 {
			t.Fatalf("key %x: not loaded or out of order after %x", key, prev)
		}
		prev = bytes.Clone(key)
		count++
	}
	if count != int(s.RecordCount) {
		t.Errorf("enumerated %d records, want %d", count, s.RecordCount)
	}
}

// Each compute node of a partitioned run inserts keys of its own range,
// taken from the permuted space, and no key twice.
func TestPermutedPartitionedInsertsStayInTheSpace(t *testing.T) {
	s := specWith(t, Properties{"recordcount": "2000", "insertorder": "permuted", "partitionedkeys": "true",
		"readproportion": "0.5", "insertproportion": "0.5", "operationcount": "4000"})
	const nodes, perNode = 3, 4
	parts, err := s.Partitions(nodes)
	if err != nil {
		t.Fatal(err)
	}
	clients, err := Cluster(nodes, perNode)
	if err != nil {
		t.Fatal(err)
	}
	inserted := map[string]bool{}
	for _, c := range clients {
		st, err := s.Stream(c)
		if err != nil {
			t.Fatal(err)
		}
		for range c.Share(s.OperationCount) {
			op := st.Next()
			if !parts[c.Node].Contains(op.Key) {
				t.Fatalf("client %d: %s of key %x outside partition %d", c.Index, op.Type, op.Key, c.Node)
			}
			if op.Type != Insert {
				continue
			}
			if inserted[string(op.Key)] {
				t.Fatalf("client %d inserts key %x a second time", c.Index, op.Key)
			}
			inserted[string(op.Key)] = true
			if n := binary.BigEndian.Uint64(op.Key); n > s.permutedSpace() {
				t.Errorf("client %d inserts key number %d past the space %d", c.Index, n, s.permutedSpace())
			}
		}
	}
}

// A client that draws far more inserts than the space was sized for runs
// out of free keys in its range: it upserts keys of its partition rather
// than searching forever for a free one.
func TestPermutedPartitionedInsertsOutliveTheSpace(t *testing.T) {
	s := specWith(t, Properties{"recordcount": "2000", "insertorder": "permuted", "partitionedkeys": "true",
		"readproportion": "0.5", "insertproportion": "0.5", "operationcount": "400"})
	parts, err := s.Partitions(2)
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Stream(Client{Node: 0, Nodes: 2, Index: 0, Total: 2})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 * s.permutedSpace() {
		if op := st.Next(); !parts[0].Contains(op.Key) {
			t.Fatalf("%s of key %x outside partition 0", op.Type, op.Key)
		}
	}
}

func TestInsertOrderProperty(t *testing.T) {
	if s := specWith(t, nil); s.InsertOrder != Hashed {
		t.Errorf("default insert order %q, want hashed", s.InsertOrder)
	}
	if _, ok := specWith(t, nil).Properties()["insertorder"]; ok {
		t.Error("the default insertorder is recorded in Properties; results from before it existed would change their hash")
	}
	s := specWith(t, Properties{"insertorder": "ordered"})
	if got := s.Properties()["insertorder"]; got != "ordered" {
		t.Errorf("Properties()[insertorder] = %q, want ordered", got)
	}
	_, err := FromProperties("x.properties", Properties{"insertorder": "random"}, nil)
	if err == nil || !strings.Contains(err.Error(), "one of hashed, ordered, permuted") {
		t.Errorf("insertorder=random: error %v, want one naming hashed and ordered", err)
	}
}

func TestSplitInterpolatesWhereBoundsDiffer(t *testing.T) {
	s := specWith(t, Properties{"insertorder": "ordered", "keysize": "24", "recordcount": "1000"})
	r := KeyRange{Start: s.Key(99), End: s.Key(299)} // numbers 100 and 300
	if got, want := r.Split(0.5), s.Key(199); !bytes.Equal(got, want) {
		t.Errorf("ordered split = %x, want %x (number 200)", got, want)
	}
	h := specWith(t, nil)
	parts, err := h.Partitions(2)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, 8)
	binary.BigEndian.PutUint64(want, 1<<62)
	if got := parts[0].Split(0.5); !bytes.Equal(got, want) {
		t.Errorf("hashed split of the lower half = %x, want %x", got, want)
	}
}

func TestWarmupReadAllProperty(t *testing.T) {
	for v, want := range map[string]ReadAll{"false": NoReadAll, "true": ReadAllOnce, "yes": ReadAllOnce, "pernode": ReadAllPerNode} {
		s := specWith(t, Properties{"warmupreadall": v})
		if s.WarmupReadAll != want {
			t.Errorf("warmupreadall=%s gives %q, want %q", v, s.WarmupReadAll, want)
		}
		if got := s.Properties()["warmupreadall"]; got != string(want) {
			t.Errorf("warmupreadall=%s is recorded as %q, want %q (true and false as before pernode existed)", v, got, want)
		}
	}
	_, err := FromProperties("x.properties", Properties{"warmupreadall": "everywhere"}, nil)
	if err == nil || !strings.Contains(err.Error(), "pernode (each record once on every compute node)") {
		t.Errorf("warmupreadall=everywhere: error %v, want one naming pernode", err)
	}
}
