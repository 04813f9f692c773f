package sim

import (
	"math/rand/v2"
	"testing"
)

// TestEventQueueOrder checks that the queue pops by time and, among
// events of equal time, in push order: the order a run's determinism and
// its event hash rest on.
func TestEventQueueOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var q eventQueue
	var want []event // pending, by push order; idx numbers the pushes
	now := int64(0)
	for round := range 3 {
		for seq := range 200_000 {
			if len(want) == 0 || rng.IntN(2) > 0 {
				// Spreads from ties to far-off times, as the fabric schedules.
				d := int64(0)
				switch rng.IntN(4) {
				case 1:
					d = rng.Int64N(16)
				case 2:
					d = rng.Int64N(1 << 20)
				case 3:
					d = rng.Int64N(1 << 40)
				}
				e := event{t: now + d, idx: int32(seq), info: uint32(round)}
				q.push(e)
				want = append(want, e)
				continue
			}
			first := 0
			for i, e := range want {
				if e.t < want[first].t {
					first = i
				}
			}
			got := q.pop()
			if got != want[first] {
				t.Fatalf("round %d, pop %d: got %+v, want %+v", round, seq, got, want[first])
			}
			now = got.t
			want = append(want[:first], want[first+1:]...)
			if q.len() != len(want) {
				t.Fatalf("len %d, want %d", q.len(), len(want))
			}
		}
		// The fabric resets the queue only to go on from the present.
		q.reset()
		want = want[:0]
	}
}
