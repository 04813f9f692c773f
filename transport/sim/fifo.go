package sim

// fifo is a first-in first-out queue that reuses its room. A slice that
// slides (q = q[1:]) loses its front and reallocates every so many
// appends: an allocation per few verbs at a busy QP or RPC server.
type fifo[T any] struct {
	items []T
	head  int
}

func (q *fifo[T]) len() int { return len(q.items) - q.head }

// push appends v, first moving the queue to the front of its room when
// more than half of it is taken by popped slots.
func (q *fifo[T]) push(v T) {
	if q.head > 16 && 2*q.head >= len(q.items) {
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	q.items = append(q.items, v)
}

// peek returns the oldest item. The queue must not be empty.
func (q *fifo[T]) peek() T { return q.items[q.head] }

// pop removes and returns the oldest item. The queue must not be empty.
func (q *fifo[T]) pop() T {
	v := q.items[q.head]
	var zero T
	q.items[q.head] = zero // do not keep it reachable
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
	return v
}

// reset empties the queue and drops its room.
func (q *fifo[T]) reset() { *q = fifo[T]{} }
