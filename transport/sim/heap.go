package sim

import "math/bits"

// event kinds.
const (
	evResume   uint8 = iota // resume a coroutine
	evArrive                // a verb reaches its responder
	evComplete              // a verb's completion reaches its requester
	evRPC                   // an RPC request reaches its server
	evTorn                  // the second half of a torn WRITE lands
	evExecute               // an atomic executes at its responder
)

// event is one entry of the event queue.
type event struct {
	t    int64 // picoseconds
	ep   *endpoint
	idx  int32 // op index in the endpoint's batch, or torn-write slot
	kind uint8
}

// eventQueue is a radix heap: a monotone priority queue over integer
// times. The simulator never schedules an event before the last one it
// popped, which is all a radix heap needs; push is O(1) and pop amortised
// O(1) per bit of time spread, with no data-dependent compare branches
// (a binary or 4-ary heap spent most of the simulator's time mispredicting
// them). Events are stored by value: no boxing, no allocation per event.
// Slots are not cleared when popped: they only point at endpoints, which
// live as long as the fabric anyway.
//
// Bucket b holds events whose time differs from last in bit b-1 at the
// highest; bucket 0 holds events at exactly last, popped in FIFO order.
// Events of equal time leave in an order fixed by the sequence of pushes
// and pops alone, so a run is deterministic.
type eventQueue struct {
	last    int64
	head    int // next event of bucket 0
	n       int
	buckets [65][]event
}

func (q *eventQueue) len() int { return q.n }

func (q *eventQueue) push(e event) {
	b := bits.Len64(uint64(e.t ^ q.last))
	q.buckets[b] = append(q.buckets[b], e)
	q.n++
}

// pop removes the earliest event. The queue must not be empty.
func (q *eventQueue) pop() event {
	if q.head == len(q.buckets[0]) {
		q.buckets[0] = q.buckets[0][:0]
		q.head = 0
		i := 1
		for len(q.buckets[i]) == 0 {
			i++
		}
		src := q.buckets[i]
		m := src[0].t
		for _, e := range src[1:] {
			m = min(m, e.t)
		}
		q.last = m
		for _, e := range src {
			b := bits.Len64(uint64(e.t ^ m))
			q.buckets[b] = append(q.buckets[b], e)
		}
		q.buckets[i] = src[:0]
	}
	e := q.buckets[0][q.head]
	q.head++
	q.n--
	return e
}

// reset empties the queue.
func (q *eventQueue) reset() {
	for i := range q.buckets {
		clear(q.buckets[i])
		q.buckets[i] = q.buckets[i][:0]
	}
	q.head, q.n = 0, 0
}
