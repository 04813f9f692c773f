package workloads

import (
	"math"
	"math/bits"

	"github.com/dmbench/dmbench/internal/splitmix"
)

// permutation is a pseudo-random bijection of [0, n): a balanced Feistel
// network on the smallest even number of bits that covers n, walked in
// cycles until its output falls below n (Black and Rogaway's cycle walking,
// which keeps it a bijection). The domain is under four times n, so a walk
// takes fewer than four rounds of the network on average.
type permutation struct {
	n    uint64
	half uint   // bits in each half of the network's word
	mask uint64 // the low half
}

// feistelRounds is enough for the output to look random to a workload; no
// secrecy is needed.
const feistelRounds = 4

// permutationKey seeds the round functions. The permutation, like the
// hashed key set, does not depend on the workload's seed: seeds change the
// operations, not the data.
const permutationKey = 0x243f6a8885a308d3

func newPermutation(n uint64) permutation {
	width := uint(bits.Len64(max(n, 2) - 1))
	half := (width + 1) / 2
	return permutation{n: n, half: half, mask: 1<<half - 1}
}

func (p permutation) round(i int, x uint64) uint64 {
	return splitmix.Mix(x^(permutationKey+uint64(i)*splitmix.Golden)) & p.mask
}

// forward maps x < n to its place in [0, n).
func (p permutation) forward(x uint64) uint64 {
	for {
		l, r := x>>p.half, x&p.mask
		for i := range feistelRounds {
			l, r = r, l^p.round(i, r)
		}
		if x = l<<p.half | r; x < p.n {
			return x
		}
	}
}

// inverse undoes forward.
func (p permutation) inverse(y uint64) uint64 {
	for {
		l, r := y>>p.half, y&p.mask
		for i := feistelRounds - 1; i >= 0; i-- {
			l, r = r^p.round(i, l), l
		}
		if y = l<<p.half | r; y < p.n {
			return y
		}
	}
}

// permutedSpace is the size of the permuted key space: the loaded records
// and room for the inserts a run is expected to make (its insert share of
// the warm-up and measured operations), with a quarter and 1024 to spare
// so that compute nodes of a partitioned run, whose insert counts vary
// around their share, still find room in their own range.
func (s *Spec) permutedSpace() uint64 {
	inserts := math.Ceil(s.InsertProportion * float64(s.WarmupOperationCount+s.OperationCount))
	if inserts > 0 {
		inserts += math.Ceil(inserts/4) + 1024
	}
	return uint64(s.RecordCount) + uint64(inserts)
}

// permutedNumber is the key number of record rec under insertorder=permuted:
// its place in the permuted space, plus one to keep zero free. Records past
// the space (a run that inserts more than its share) continue in order
// above it.
func (s *Spec) permutedNumber(rec int64) uint64 {
	space := s.permutedSpace()
	if uint64(rec) >= space {
		return uint64(rec) + 1
	}
	return newPermutation(space).forward(uint64(rec)) + 1
}
