package sim

import (
	"math/rand/v2"
	"testing"
)

// The fifo gives items back in push order however pushes and pops
// interleave, and its room stays bounded by the most items it held.
func TestFIFOOrder(t *testing.T) {
	var q fifo[int]
	var want []int
	r := rand.New(rand.NewPCG(1, 1))
	next, most := 0, 0
	for range 100000 {
		if r.IntN(3) > 0 || q.len() == 0 { // mostly pushes while the queue is short
			if q.len() < 200 {
				q.push(next)
				want = append(want, next)
				next++
			}
		}
		if q.len() > 0 && r.IntN(2) == 0 {
			if got := q.pop(); got != want[0] {
				t.Fatalf("popped %d, want %d", got, want[0])
			}
			want = want[1:]
		}
		if q.len() != len(want) {
			t.Fatalf("len %d, want %d", q.len(), len(want))
		}
		most = max(most, q.len())
	}
	if cap(q.items) > 4*most+64 {
		t.Errorf("room %d for at most %d items", cap(q.items), most)
	}
}
