package workloads

import (
	"math"
	"math/bits"
	"math/rand"
	"sync"

	"github.com/pingcap/go-ycsb/pkg/generator"
	"github.com/pingcap/go-ycsb/pkg/ycsb"
)

// chooser draws a number: a record number or a scan length.
type chooser interface {
	next(r *rand.Rand) int64
}

// below draws from a go-ycsb generator and draws again for values at or
// past limit: go-ycsb's Zipfian returns one past its last item when the
// uniform variate is close enough to 1.
type below struct {
	gen   ycsb.Generator
	limit int64
}

func (b below) next(r *rand.Rand) int64 {
	for {
		if v := b.gen.Next(r); v < b.limit {
			return v
		}
	}
}

// rotated walks a go-ycsb Sequential over [0, n) from a client's own offset.
type rotated struct {
	seq       *generator.Sequential
	offset, n int64
}

func (c rotated) next(r *rand.Rand) int64 {
	return (c.seq.Next(r) + c.offset) % c.n
}

// latest draws a Zipfian offset back from the newest record the client
// knows of, so that its recent inserts are the hottest records.
type latest struct {
	offsets below // Zipfian over [0, RecordCount)
	st      *Stream
}

func (c latest) next(r *rand.Rand) int64 {
	return c.st.knownRecord(c.st.known() - 1 - c.offsets.next(r))
}

// newRecordChooser picks existing records for reads, updates, scans and
// read-modify-writes. Record numbers double as Zipfian ranks and hotspot
// positions: hashed keys scatter them over the key space, as go-ycsb's
// hashed insert order does; ordered keys put the hottest records on the
// smallest keys, as Dolphin's benchmark does with its Zipfian ranks.
//
// The draws that go through below keep it, and a uniform generator, in the
// Stream itself (recordDraw, uniform), next to the random source they
// draw from: see Stream.
func newRecordChooser(st *Stream) chooser {
	s, n := &st.spec, st.spec.RecordCount
	switch s.RequestDistribution {
	case Zipfian:
		st.recordDraw = below{newZipfian(0, n-1, s.ZipfianConstant), n}
		return &st.recordDraw
	case Latest:
		return latest{offsets: below{newZipfian(0, n-1, s.ZipfianConstant), n}, st: st}
	case Hotspot:
		st.recordDraw = below{generator.NewHotspot(0, n-1, s.HotspotDataFraction, s.HotspotOpnFraction), n}
		return &st.recordDraw
	case Sequential:
		// Client i of T starts at record i*n/T, computed without overflow.
		hi, lo := bits.Mul64(uint64(n), uint64(st.client.Index))
		offset, _ := bits.Div64(hi, lo, uint64(st.client.Total))
		return rotated{seq: generator.NewSequential(0, n-1), offset: int64(offset), n: n}
	default:
		st.uniform = *generator.NewUniform(0, n-1)
		st.recordDraw = below{&st.uniform, n}
		return &st.recordDraw
	}
}

// newScanLengthChooser draws scan lengths from 1 to MaxScanLength. Zipfian
// lengths use go-ycsb's fixed 0.99 as its core workload does:
// zipfianconstant is the skew of requests, not of lengths.
func newScanLengthChooser(s *Spec) chooser {
	limit := s.MaxScanLength + 1
	switch s.ScanLengthDistribution {
	case Zipfian:
		return below{newZipfian(1, s.MaxScanLength, generator.ZipfianConstant), limit}
	case Constant:
		return below{generator.NewConstant(s.MaxScanLength), limit}
	default:
		return below{generator.NewUniform(1, s.MaxScanLength), limit}
	}
}

// newZipfian builds a go-ycsb Zipfian over [lo, hi] with its zeta constant
// taken from the process-wide cache: the generator is not safe to share
// between clients, and summing zeta for each of them would cost a second
// per client at 50 M records.
func newZipfian(lo, hi int64, theta float64) *generator.Zipfian {
	return generator.NewZipfian(lo, hi, theta, zeta(hi-lo+1, theta))
}

type zetaKey struct {
	items int64
	theta float64
}

var zetaCache sync.Map // zetaKey -> *lazy[float64]

// zetaExactItems is how many terms of zeta are summed one by one; beyond
// them the Euler-Maclaurin formula finishes the sum.
const zetaExactItems = 1 << 16

// zeta is sum_{i=1..items} 1/i^theta, the constant go-ycsb's Zipfian needs.
// Up to zetaExactItems items it is summed term by term in the order of
// go-ycsb's (unexported) zetaStatic, so small generators match the ones
// NewZipfianWithRange builds bit for bit. Larger counts, where term by term
// costs over a second per 10 M items, add the Euler-Maclaurin tail instead.
func zeta(items int64, theta float64) float64 {
	return cached(&zetaCache, zetaKey{items, theta}, func() float64 {
		head := min(items, zetaExactItems)
		sum := 0.0
		for i := range head {
			sum += 1 / math.Pow(float64(i+1), theta)
		}
		if items > head {
			sum += zetaTail(float64(head), float64(items), theta)
		}
		return sum
	})
}

// zetaTail is sum_{i=m+1..n} i^-s by the Euler-Maclaurin formula for
// f(x) = x^-s: the integral of f from m to n, plus (f(n)-f(m))/2, plus the
// Bernoulli terms B2/2! (d1(n)-d1(m)) and B4/4! (d3(n)-d3(m)), d1 and d3
// being the first and third derivatives of f. From m = 2^16 on, the next
// term is below 1e-30.
func zetaTail(m, n, s float64) float64 {
	f := func(x float64) float64 { return math.Pow(x, -s) }
	d1 := func(x float64) float64 { return -s * math.Pow(x, -s-1) }
	d3 := func(x float64) float64 { return -s * (s + 1) * (s + 2) * math.Pow(x, -s-3) }
	integral := (math.Pow(n, 1-s) - math.Pow(m, 1-s)) / (1 - s)
	return integral + (f(n)-f(m))/2 + (d1(n)-d1(m))/12 - (d3(n)-d3(m))/720
}

type partitionKey struct {
	records int64
	nodes   int
	order   InsertOrder
	space   uint64 // the permuted space; 0 for other orders
}

var partitionCache sync.Map // partitionKey -> *lazy[[]int64]

// partitionRecords counts the loaded records of each of nodes partitions.
func partitionRecords(s *Spec, nodes int) []int64 {
	key := partitionKey{s.RecordCount, nodes, s.InsertOrder, 0}
	if s.InsertOrder == Permuted {
		key.space = s.permutedSpace()
	}
	return cached(&partitionCache, key, func() []int64 {
		counts := make([]int64, nodes)
		for rec := range s.RecordCount {
			counts[s.partitionOf(s.keyNumber(rec), nodes)]++
		}
		return counts
	})
}

// lazy is a value computed once, on first use.
type lazy[T any] struct {
	once  sync.Once
	value T
}

// cached returns the value cached under key in m, computing it on first use;
// concurrent first users wait for one computation.
func cached[K comparable, T any](m *sync.Map, key K, compute func() T) T {
	entry, _ := m.LoadOrStore(key, new(lazy[T]))
	l := entry.(*lazy[T])
	l.once.Do(func() { l.value = compute() })
	return l.value
}
