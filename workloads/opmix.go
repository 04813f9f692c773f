package workloads

import (
	"fmt"
	"math/rand"
)

// opMix draws a stream's operation types exactly as go-ycsb's
// generator.Discrete does (one Float64 per draw, each weight divided by
// the weights' sum, subtracted in the order added), so the streams are
// the same, but keeps the weights inside the Stream: at 1,728 clients a
// client's stream is cold in the cache whenever it runs again, and the
// Discrete's two pointers cost two more misses per operation.
type opMix struct {
	// n, ops and pw, which every draw reads, come first: they share a
	// cache line with the fields before them in Stream.
	n   int
	ops [numOpTypes]OpType
	pw  [numOpTypes]float64 // each weight over their sum
	w   [numOpTypes]float64 // weights, in the order added
}

// numOpTypes bounds the operation types a mix draws from.
const numOpTypes = int(Delete) + 1

// add appends op with weight w.
func (m *opMix) add(w float64, op OpType) {
	m.w[m.n], m.ops[m.n] = w, op
	m.n++
	sum := float64(0)
	for _, x := range m.w[:m.n] {
		sum += x
	}
	for i, x := range m.w[:m.n] {
		m.pw[i] = x / sum
	}
}

// next draws an operation type.
func (m *opMix) next(r *rand.Rand) OpType {
	val := r.Float64()
	for i, pw := range m.pw[:m.n] {
		if val < pw {
			return m.ops[i]
		}
		val -= pw
	}
	panic(fmt.Sprintf("workloads: operation mix %v drew nothing", m.w[:m.n]))
}
