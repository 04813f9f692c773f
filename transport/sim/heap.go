package sim

import (
	"math/bits"

	"github.com/dmbench/dmbench/transport"
)

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
	t   int64 // picoseconds
	ep  *endpoint
	idx int32 // op index in the endpoint's batch, or torn-write slot
	// info is the kind (bits 0-7) and, for evComplete, whether the op is
	// a READ or an atomic (infoRA) and its target node (bits 16-31), so
	// that completing the op need not touch it, a cache miss by then.
	// One field rather than three: the compiler keeps a struct of at
	// most four fields in registers and copies a larger one through
	// memory, and the queue moves each event several times.
	info uint32
}

const infoRA = 1 << 8

func (e event) kind() uint8 { return uint8(e.info) }

// completion is the evComplete event of op idx of ep at time t.
func completion(t int64, ep *endpoint, idx int32, op *transport.Op) event {
	info := uint32(evComplete) | uint32(op.Addr.Node())<<16
	if isReadOrAtomic(op.Kind) {
		info |= infoRA
	}
	return event{t: t, ep: ep, idx: idx, info: info}
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
//
// full has bit b-1 set while bucket b (1-64) holds events, so pop finds
// the next bucket in one instruction rather than by loading the headers
// of the empty buckets below it. low[b] is the earliest time in bucket
// b (1-64), complemented so that the zero value stands for an empty
// bucket: pop need not read the bucket once more to find its minimum.
type eventQueue struct {
	last    int64
	head    int // next event of bucket 0
	n       int
	full    uint64
	low     [65]uint64
	buckets [65][]event
}

func (q *eventQueue) len() int { return q.n }

func (q *eventQueue) push(e event) {
	q.add(e, q.last)
	q.n++
}

// add files e in its bucket relative to time last.
func (q *eventQueue) add(e event, last int64) {
	b := bits.Len64(uint64(e.t ^ last))
	q.buckets[b] = append(q.buckets[b], e)
	q.full |= 1 << uint(b-1) // nothing for bucket 0
	q.low[b] = max(q.low[b], ^uint64(e.t))
}

// pop removes the earliest event. The queue must not be empty.
func (q *eventQueue) pop() event {
	if q.head == len(q.buckets[0]) {
		q.buckets[0] = q.buckets[0][:0]
		q.head = 0
		i := bits.TrailingZeros64(q.full) + 1
		src := q.buckets[i]
		m := int64(^q.low[i])
		q.last = m
		q.buckets[i], q.full, q.low[i] = src[:0], q.full&^(1<<uint(i-1)), 0
		for _, e := range src {
			q.add(e, m)
		}
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
	q.head, q.n, q.full, q.low = 0, 0, 0, [65]uint64{}
}
