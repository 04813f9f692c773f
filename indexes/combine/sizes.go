package combine

import (
	"encoding/json"
	"sort"
)

// Sizes is the distribution of round sizes: how many operations each
// remote operation served (1: no one was combined with the winner).
type Sizes struct {
	counts map[int]uint64 // by size
	rounds uint64
	ops    uint64
}

// sizesJSON is Sizes as compute-node processes hand it to each other.
type sizesJSON struct {
	Counts map[int]uint64 `json:"counts"`
	Rounds uint64         `json:"rounds"`
	Ops    uint64         `json:"ops"`
}

// MarshalJSON encodes the distribution.
func (s Sizes) MarshalJSON() ([]byte, error) {
	return json.Marshal(sizesJSON{s.counts, s.rounds, s.ops})
}

// UnmarshalJSON decodes what MarshalJSON encoded.
func (s *Sizes) UnmarshalJSON(b []byte) error {
	var j sizesJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = Sizes{counts: j.Counts, rounds: j.Rounds, ops: j.Ops}
	return nil
}

func (s *Sizes) add(n int) {
	if s.counts == nil {
		s.counts = map[int]uint64{}
	}
	s.counts[n]++
	s.rounds++
	s.ops += uint64(n)
}

func (s *Sizes) clone() Sizes {
	c := Sizes{rounds: s.rounds, ops: s.ops, counts: make(map[int]uint64, len(s.counts))}
	for k, v := range s.counts {
		c.counts[k] = v
	}
	return c
}

// Merge adds o's rounds to s.
func (s *Sizes) Merge(o Sizes) {
	for k, v := range o.counts {
		if s.counts == nil {
			s.counts = map[int]uint64{}
		}
		s.counts[k] += v
	}
	s.rounds += o.rounds
	s.ops += o.ops
}

// Since is s without the rounds of earlier, a state s grew from: the
// rounds of a measured phase, say.
func (s Sizes) Since(earlier Sizes) Sizes {
	d := Sizes{rounds: s.rounds - earlier.rounds, ops: s.ops - earlier.ops, counts: map[int]uint64{}}
	for k, v := range s.counts {
		if n := v - earlier.counts[k]; n > 0 {
			d.counts[k] = n
		}
	}
	return d
}

// Rounds is how many rounds ran; Ops how many operations they served.
func (s Sizes) Rounds() uint64 { return s.rounds }

// Ops is how many operations the rounds served.
func (s Sizes) Ops() uint64 { return s.ops }

// Mean is the mean round size (0 without rounds).
func (s Sizes) Mean() float64 {
	if s.rounds == 0 {
		return 0
	}
	return float64(s.ops) / float64(s.rounds)
}

// Quantile is the smallest size that at least fraction q of the rounds do
// not exceed.
func (s Sizes) Quantile(q float64) int {
	keys := make([]int, 0, len(s.counts))
	for k := range s.counts {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	need := q * float64(s.rounds)
	var seen uint64
	for _, k := range keys {
		seen += s.counts[k]
		if float64(seen) >= need {
			return k
		}
	}
	return 0
}

// Max is the largest round.
func (s Sizes) Max() int {
	m := 0
	for k := range s.counts {
		m = max(m, k)
	}
	return m
}
