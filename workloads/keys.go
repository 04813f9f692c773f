package workloads

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"iter"
	"math"
	"math/bits"
	"slices"

	"github.com/dmbench/dmbench/internal/splitmix"
)

// recordsPerPass bounds the keys Records sorts at once: two buffers of
// about 36 MB. Halving it costs a third more time at 50 M records, doubling
// it saves a fifth.
const recordsPerPass = 1 << 22

// keyPrefix is the first eight bytes of record rec's key as a number. The +1
// keeps the prefix of record 0 away from zero: only record number 2^64-1
// would get it. The all-ones prefix belongs to record 0xcf9a04affa6badbf,
// also above 2^63, so no int64 record number has either.
func keyPrefix(rec int64) uint64 {
	return splitmix.Mix(uint64(rec) + 1)
}

// encodeKey writes the key with the given prefix into dst (len(dst) is the
// key size, at least 8). The bytes after the prefix are derived from it so
// that long keys are not mostly zeros, which would flatter indexes that
// compress common suffixes or hash keys.
func encodeKey(dst []byte, prefix uint64) {
	binary.BigEndian.PutUint64(dst, prefix)
	splitmix.Fill(dst[8:], prefix)
}

// loadedValueSalt separates a loaded record's value from its key filler,
// which is seeded by the same prefix.
const loadedValueSalt = 0x6a09e667f3bcc908

// keySeed folds a key into a seed: its first 8 bytes (a hashed key's
// prefix) and its last 8 (a dense key's number).
func keySeed(key []byte) uint64 {
	return splitmix.Mix(binary.BigEndian.Uint64(key)) + binary.BigEndian.Uint64(key[len(key)-8:])
}

// updatedValueSalt seeds the one value every update of a key writes with
// keyedupdates, apart from the key's loaded value.
const updatedValueSalt = 0xbb67ae8584caa73b

// InsertOrder is how record numbers become keys: go-ycsb's insertorder.
type InsertOrder string

// The key encodings. Hashed scatters records over the key space (go-ycsb's
// default); Ordered makes record i the integer i+1, so the keys are dense
// and consecutive records are neighbours; Permuted makes the keys dense
// integers too but gives the records pseudo-random places among them, as
// DEX's benchmark does.
const (
	Hashed   InsertOrder = "hashed"
	Ordered  InsertOrder = "ordered"
	Permuted InsertOrder = "permuted"
)

// InsertSplit is how the clients of a run share the record numbers they
// insert (dmbench's insertsplit).
type InsertSplit string

// The splits. Interleaved deals the numbers past the loaded records out
// round-robin, so the clients insert side by side at the newest end of an
// ordered key space; Chunked gives each client one contiguous run of
// them, which it inserts in increasing order, as YCSB's insertstart and
// insertcount split a load over client processes and SMART's
// ycsb/split_workload.py (used by Dolphin's test/ycsb_test.cpp) cuts a
// workload file into one contiguous piece per client. UniformDraw draws each
// insert's record uniformly from a key space twice the loaded records, so
// that about half the inserts replace a loaded record's value and the
// rest add keys anywhere in the upper half: Dolphin's benchmarks
// (hust-anhang/Dolphin test/benchmark.cpp and test/range_query.cpp) warm
// up the lower part of their integer key space and draw every insert's
// key over all of it, an update when the key is there.
const (
	Interleaved InsertSplit = "interleaved"
	Chunked     InsertSplit = "chunked"
	UniformDraw InsertSplit = "uniform"
)

// ReadAll is how the runner reads every loaded record before the warm-up
// mix (dmbench's warmupreadall).
type ReadAll string

// The read-all warm-ups. NoReadAll reads nothing. ReadAllOnce reads each
// record once in the cluster, record r by client r mod clients.
// ReadAllPerNode reads each record once on every compute node: the DMTree
// artifact's benchmarks (muouim/aefast26 DMTree/test/ycsbc.cc and the
// Sherman, SMART, ROLEX, CHIME and FP-B+-tree ones beside it) start every
// compute node's warm-up threads at record 0, so each server fills its own
// cache with the whole data set. With partitioned keys either way reads
// each partition's records on its own node, as dLSM's benchmark
// (dLSM/benchmarks/ycsbc.cc) warms each node with its share.
const (
	NoReadAll      ReadAll = "false"
	ReadAllOnce    ReadAll = "true"
	ReadAllPerNode ReadAll = "pernode"
)

// On reports whether the warm-up reads the records at all.
func (r ReadAll) On() bool { return r == ReadAllOnce || r == ReadAllPerNode }

// dense reports whether the order's keys are small integers, zero-padded
// in front.
func (o InsertOrder) dense() bool { return o == Ordered || o == Permuted }

// keyNumber is the key number of record rec: the integer whose big-endian
// bytes the key carries (the first eight bytes of a hashed key, the last
// eight of an ordered or permuted one). Every encoding is increasing in the
// number, and none gives a record the number 0.
func (s *Spec) keyNumber(rec int64) uint64 { return s.InsertOrder.keyNumber(s, rec) }

// keyNumber is s.keyNumber(rec) for keys in order o, s's order: it reads
// s only for a permutation.
func (o InsertOrder) keyNumber(s *Spec, rec int64) uint64 {
	switch o {
	case Ordered:
		return uint64(rec) + 1
	case Permuted:
		return s.permutedNumber(rec)
	}
	return keyPrefix(rec)
}

// encode writes the key with key number n into dst (len(dst) is the key
// size, at least 8). An ordered or permuted key is the number zero-padded
// in front, so that byte order is number order and consecutive numbers
// share every byte but the last few, as Dolphin's leaves (one per 7-byte
// prefix) expect of dense keys.
func (o InsertOrder) encode(dst []byte, n uint64) {
	if o.dense() {
		tail := len(dst) - 8
		clear(dst[:tail])
		binary.BigEndian.PutUint64(dst[tail:], n)
		return
	}
	encodeKey(dst, n)
}

// encodeRecord writes record rec's key into dst.
func (s *Spec) encodeRecord(dst []byte, rec int64) {
	s.InsertOrder.encodeRecord(s, dst, rec)
}

// encodeRecord is s.encodeRecord(dst, rec) for keys in order o, s's
// order: a Stream keeps o in its first cache line, apart from its Spec.
func (o InsertOrder) encodeRecord(s *Spec, dst []byte, rec int64) {
	o.encode(dst, o.keyNumber(s, rec))
}

// Key returns the key of record number rec >= 0: a loaded record when
// rec < RecordCount, an inserted one after that.
func (s *Spec) Key(rec int64) []byte {
	key := make([]byte, s.KeySize)
	s.encodeRecord(key, rec)
	return key
}

// Records enumerates the RecordCount bulk-load records in strictly
// increasing key order, with their values (ValueSize bytes, derived from the
// key). The yielded slices are reused: copy them to keep them.
//
// It holds about 4 Mi keys at a time: each pass sweeps every record number,
// keeps those whose keys fall in the pass's slice of the key space, and
// sorts them. 50 M records take 16 passes, about 6 s on one 2.8 GHz core.
func (s *Spec) Records() (iter.Seq2[[]byte, []byte], error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if s.TraceFile != "" {
		t, err := s.loadTrace()
		if err != nil {
			return nil, err
		}
		return s.traceRecords(t), nil
	}
	return s.records(recordsPerPass), nil
}

func (s *Spec) records(perPass int64) iter.Seq2[[]byte, []byte] {
	switch s.InsertOrder {
	case Ordered:
		return s.orderedRecords()
	case Permuted:
		return s.permutedRecords()
	}
	n := s.RecordCount
	passes := int64(1)
	for passes*perPass < n {
		passes <<= 1
	}
	// A pass is the keys whose prefix has the pass number in its top
	// topBits bits.
	topBits := uint(bits.TrailingZeros64(uint64(passes)))
	keySize, valueSize := s.KeySize, s.ValueSize()
	return func(yield func(key, value []byte) bool) {
		// Pass sizes are binomial around n/passes; the slack makes regrowth rare.
		perPassCap := min(n/passes+n/passes/8+64, n)
		prefixes := make([]uint64, 0, perPassCap)
		sorted := make([]uint64, 0, perPassCap)
		key := make([]byte, keySize)
		value := make([]byte, valueSize)
		for p := range uint64(passes) {
			prefixes = collectPass(prefixes[:0], n, topBits, p)
			sorted = sortSpread(sorted, prefixes, topBits)
			for _, k := range sorted {
				encodeKey(key, k)
				splitmix.Fill(value, k^loadedValueSalt)
				if !yield(key, value) {
					return
				}
			}
		}
	}
}

// orderedRecords enumerates ordered keys: record order is key order, so
// no pass or sort is needed.
func (s *Spec) orderedRecords() iter.Seq2[[]byte, []byte] {
	keySize, valueSize, n := s.KeySize, s.ValueSize(), s.RecordCount
	return func(yield func(key, value []byte) bool) {
		key := make([]byte, keySize)
		value := make([]byte, valueSize)
		for rec := range n {
			k := s.keyNumber(rec)
			Ordered.encode(key, k)
			splitmix.Fill(value, k^loadedValueSalt)
			if !yield(key, value) {
				return
			}
		}
	}
}

// permutedRecords enumerates permuted keys by walking the key space in
// order and keeping the numbers whose records are loaded: no sort is
// needed, and the inverse permutation costs a few hashes per number.
func (s *Spec) permutedRecords() iter.Seq2[[]byte, []byte] {
	keySize, valueSize, loaded := s.KeySize, s.ValueSize(), uint64(s.RecordCount)
	perm := newPermutation(s.permutedSpace())
	return func(yield func(key, value []byte) bool) {
		key := make([]byte, keySize)
		value := make([]byte, valueSize)
		for i := range perm.n {
			if perm.inverse(i) >= loaded {
				continue
			}
			Permuted.encode(key, i+1)
			splitmix.Fill(value, (i+1)^loadedValueSalt)
			if !yield(key, value) {
				return
			}
		}
	}
}

// collectPass appends to dst the key prefixes of records [0, n) whose top
// topBits bits are p. It is the hot loop of Records: keep it small.
func collectPass(dst []uint64, n int64, topBits uint, p uint64) []uint64 {
	// With one pass the shift is 64, which Go defines to give 0.
	shift := 64 - topBits
	for rec := range n {
		if k := keyPrefix(rec); k>>shift == p {
			dst = append(dst, k)
		}
	}
	return dst
}

// sortSpread sorts src into dst (reusing its storage) and returns it. The
// values share their top topBits bits and are spread evenly below them, so
// one counting-sort step on the next bits leaves buckets of about eight
// values for a comparison sort to finish: several times faster than sorting
// millions of values by comparison.
func sortSpread(dst, src []uint64, topBits uint) []uint64 {
	dst = slices.Grow(dst[:0], len(src))[:len(src)]
	bucketBits := uint(max(bits.Len(uint(len(src)))-3, 0))
	bucket := func(k uint64) uint64 { return (k << topBits) >> (64 - bucketBits) }
	// bounds[i] becomes the start of bucket i, then, once the values are
	// placed, its end.
	bounds := make([]uint32, 1<<bucketBits+1)
	for _, k := range src {
		bounds[bucket(k)+1]++
	}
	for i := 1; i < len(bounds); i++ {
		bounds[i] += bounds[i-1]
	}
	for _, k := range src {
		i := bucket(k)
		dst[bounds[i]] = k
		bounds[i]++
	}
	start := uint32(0)
	for _, end := range bounds[:1<<bucketBits] {
		slices.Sort(dst[start:end])
		start = end
	}
	return dst
}

// KeyRange is the half-open key interval [Start, End). End is nil for the
// last range, which extends to the largest key.
type KeyRange struct {
	Start, End []byte
}

// Contains reports whether key lies in r.
func (r KeyRange) Contains(key []byte) bool {
	return bytes.Compare(key, r.Start) >= 0 && (r.End == nil || bytes.Compare(key, r.End) < 0)
}

// Split is the key a fraction (0 < fraction < 1) of the way through r:
// where a repartitioning cuts a range in two. It interpolates in the eight
// bytes from the first one where the bounds differ (at most keysize-8, so
// the window fits): the key prefix of hashed keys, the integer of ordered
// ones. A range without End extends to the all-ones key.
func (r KeyRange) Split(fraction float64) []byte {
	end := r.End
	if end == nil {
		end = bytes.Repeat([]byte{0xff}, len(r.Start))
	}
	off := 0
	for off < len(r.Start)-8 && r.Start[off] == end[off] {
		off++
	}
	lo := binary.BigEndian.Uint64(r.Start[off:])
	width := math.MaxUint64 - lo + 1 // to the end of the window
	if r.End != nil {
		width = binary.BigEndian.Uint64(r.End[off:]) - lo
	}
	key := bytes.Clone(r.Start[:off+8])
	key = append(key, make([]byte, len(r.Start)-off-8)...)
	binary.BigEndian.PutUint64(key[off:], lo+uint64(fraction*float64(width)))
	return key
}

// Partitions splits the key space into nodes contiguous ranges, the
// logical partitions of DEX section 4 (one per compute node; section 8.1
// gives each an equal range). The first starts at the all-zero key, the
// last extends to the largest key. With hashed keys the ranges are equal
// slices of the 64-bit key prefix; with ordered keys they are equal slices
// of the loaded records (keys 1 to recordcount), so every node gets its
// share of the data, and the inserts, which take numbers past the loaded
// records, all fall into the last one; with permuted keys they are equal
// slices of the permuted space, loaded and inserted keys alike. Streams
// with PartitionedKeys keep compute node c inside range c.
func (s *Spec) Partitions(nodes int) ([]KeyRange, error) {
	if nodes < 1 {
		return nil, fmt.Errorf("workloads: partitions of %d compute nodes: want at least 1", nodes)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	ranges := make([]KeyRange, nodes)
	for c := range ranges {
		ranges[c].Start = make([]byte, s.KeySize)
		if c > 0 {
			s.InsertOrder.encode(ranges[c].Start, s.partitionStart(c, nodes))
			ranges[c-1].End = bytes.Clone(ranges[c].Start)
		}
	}
	return ranges, nil
}

// denseSpace is the key numbers that dense keys are partitioned over: the
// loaded records for ordered keys, the permuted space for permuted ones.
func (s *Spec) denseSpace() uint64 {
	if s.InsertOrder == Permuted {
		return max(s.permutedSpace(), 1)
	}
	return uint64(max(s.RecordCount, 1))
}

// partitionOf returns the partition of key number n among nodes ranges.
func (s *Spec) partitionOf(n uint64, nodes int) int {
	if s.InsertOrder.dense() {
		// floor((n-1) * nodes / space), numbers past the space in the last.
		space := s.denseSpace()
		if n > space {
			return nodes - 1
		}
		hi, lo := bits.Mul64(n-1, uint64(nodes))
		q, _ := bits.Div64(hi, lo, space)
		return int(q)
	}
	// floor(prefix * nodes / 2^64)
	hi, _ := bits.Mul64(n, uint64(nodes))
	return int(hi)
}

// partitionStart is the smallest key number of partition c > 0, which
// makes it agree with partitionOf: ceil(c * 2^64 / nodes) for hashed keys,
// 1 + ceil(c * space / nodes) for dense ones.
func (s *Spec) partitionStart(c, nodes int) uint64 {
	if s.InsertOrder.dense() {
		hi, lo := bits.Mul64(uint64(c), s.denseSpace())
		q, rem := bits.Div64(hi, lo, uint64(nodes))
		if rem != 0 {
			q++
		}
		return q + 1
	}
	q, rem := bits.Div64(uint64(c), 0, uint64(nodes))
	if rem != 0 {
		q++
	}
	return q
}
