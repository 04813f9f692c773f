package sim

import (
	"iter"
	"math/rand/v2"
	"testing"
)

// BenchmarkCoroutineSwitch measures the floor under the simulator's
// scheduling: n iter.Pull coroutines, each resumed in turn and yielding
// straight back after touching a little of its own state and stack, as a
// client does between two verbs. ns/op is one resume+yield pair, the two
// switches every simulated verb costs. n = 1,728 is the DMTree cluster (6
// compute nodes x 72 threads x 4 coroutines); "random" resumes them in a
// fixed pseudo-random order, so that, as in the simulator, the stack and
// state of the next coroutine are not the neighbours of the last one's,
// and n = 16 is the cost with everything in cache.
func BenchmarkCoroutineSwitch(b *testing.B) {
	for _, c := range []struct {
		name   string
		n      int
		random bool
	}{
		{"n=16", 16, false},
		{"n=1728/in-order", 1728, false},
		{"n=1728/random", 1728, true},
	} {
		b.Run(c.name, func(b *testing.B) { coroutineSwitch(b, c.n, c.random) })
	}
}

// coState is a coroutine's own state, a cache line like the hot part of an
// endpoint.
type coState struct {
	count uint64
	_     [56]byte
}

func coroutineSwitch(b *testing.B, n int, random bool) {
	states := make([]coState, n)
	nexts := make([]func() (struct{}, bool), n)
	stops := make([]func(), n)
	for i := range n {
		s := &states[i]
		nexts[i], stops[i] = iter.Pull(func(yield func(struct{}) bool) {
			var frame [32]uint64 // a client's stack between two verbs
			for k := uint64(0); ; k++ {
				frame[k%32] += k
				s.count += frame[(k+7)%32]
				if !yield(struct{}{}) {
					return
				}
			}
		})
	}
	defer func() {
		for _, stop := range stops {
			stop()
		}
	}()
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	if random {
		rand.New(rand.NewPCG(1, 2)).Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
	}
	for _, i := range order { // start every coroutine before b.Loop starts the clock
		nexts[i]()
	}
	i := 0
	for b.Loop() {
		nexts[order[i]]()
		if i++; i == n {
			i = 0
		}
	}
}
