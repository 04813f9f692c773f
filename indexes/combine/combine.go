// Package combine is the local lock table of read delegation and write
// combining that DMTree (FAST'26, section 4.1) and CHIME (SOSP'24) take
// from SMART (OSDI'23): the coroutines of one compute node that operate
// on the same key at the same time share one remote operation.
//
// It follows the DMTree artifact's LocalLockTable.h (github
// muouim/aefast26, DMTree/include/LocalLockTable.h; the same design as
// dmemsys/SMART's include/LocalLockTable.h):
//
//   - Every operation on a key takes a ticket on the key's queue
//     (write_ticket / read_ticket there); a writer first drops its value
//     into the key's combining buffer (wc_buffer), overwriting the
//     previous one.
//   - The operation at the head of the queue with no round in flight is
//     the winner: it runs the remote operation. A writing winner takes the
//     latest buffered value just before its remote WRITE
//     (get_combining_value, called in DMTree.cc right before the entry is
//     written), so the WRITE carries the last value dropped in.
//   - When the winner finishes, the operations its round covers are
//     handed its result (read_handover / write_handover) and return
//     without a verb; the next operation in the queue becomes the winner
//     of the next round.
//   - Read side: an operation that finds more than Window operations
//     already queued on the key does not queue (MAX_HOCL_HANDOVER = 8)
//     and runs on its own. Write side: no bound; a round covers the
//     queue as it stands.
//
// Deviation (linearizability): the artifact hands the result to every
// operation queued when the winner releases, including ones that arrived
// after the winner's remote READ or WRITE had already been issued. Such a
// late writer would return without its value ever reaching memory, and a
// late reader could return a value older than a write that completed
// before it began. Here a round covers only the operations that joined
// before the winner's Snapshot, which the index takes right before the
// verb that decides the result (the entry WRITE under the leaf lock, or
// the READ a search's answer comes from); later ones wait for the next
// round. The artifact hashes keys onto a fixed array of lock nodes and
// lets a key that collides run alone; here the table is keyed exactly.
//
// Local contention is charged as CPU work on the caller's thread
// (package cost): taking a ticket, dropping a value into the buffer,
// handing a result over and reading it each move a contended cache line.
package combine

import (
	"sync"
	"unsafe"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// Table is one compute node's queues for one kind of operation (reads or
// writes), by key, with results of type R.
type Table[R any] struct {
	// Window bounds the queue an operation joins (0: unbounded): the
	// read side's MAX_HOCL_HANDOVER of the artifact.
	Window int

	mu sync.Mutex // never held across a verb or a Park
	// keys maps each busy key to its queue; a key's string shares the
	// bytes of its queue's key (queue.name), so that the insertion
	// nearly every operation makes allocates nothing.
	keys  map[string]*queue[R]
	sizes Sizes
	// free holds queues of keys that went idle, for reuse: nearly every
	// operation finds its key idle, and a queue a time was an
	// allocation per operation.
	free []*queue[R]
}

// queue is one key's ticket queue.
type queue[R any] struct {
	key     []byte // the key, reused with the queue
	tickets uint64 // tickets taken
	covered uint64 // tickets served by finished rounds
	snap    uint64 // tickets the round in flight covers, from its Snapshot
	running bool
	buf     []byte // the combining buffer: the last value dropped in
	waiters []*waiter[R]
	round   Round[R] // the round in flight; one per queue at a time
}

// waiter is a parked operation; a round that covers it fills res.
type waiter[R any] struct {
	ep     transport.Endpoint
	ticket uint64
	served bool
	res    R
}

// Round is the winner's view of its round, valid while its op runs.
type Round[R any] struct {
	t *Table[R]
	q *queue[R] // nil when the operation runs alone
}

// Snapshot closes the round to later arrivals and returns the combining
// buffer: the value the round's WRITE must carry (nil on the read side).
// Every operation queued so far gets the round's result. Call it right
// before the verb that decides the result; calling it again moves the
// cut later.
func (r *Round[R]) Snapshot() []byte {
	if r == nil || r.q == nil {
		return nil
	}
	r.t.mu.Lock()
	defer r.t.mu.Unlock()
	r.q.snap = r.q.tickets
	return r.q.buf
}

// Do runs op for key once for every operation of the round it joins. val
// is a writer's value for the combining buffer (nil for reads). handed
// reports that the result came from another operation's round. Do keeps
// no reference to key once it returns.
func (t *Table[R]) Do(ep transport.Endpoint, key []byte, val []byte, op func(*Round[R]) R) (res R, handed bool) {
	t.mu.Lock()
	if t.keys == nil {
		t.keys = map[string]*queue[R]{}
	}
	q := t.keys[string(key)]
	if q == nil {
		q = t.newQueue(key)
		t.keys[q.name()] = q
	}
	busy := q.tickets - q.covered
	if t.Window > 0 && busy > uint64(t.Window) {
		t.mu.Unlock()
		// The queue is full: run alone, outside any round.
		return op(&Round[R]{t: t}), false
	}
	q.tickets++
	me := q.tickets
	if val != nil {
		q.buf = val
	}
	// Taking the ticket (and filling the buffer) moves lines another
	// core holds when the key is busy. The charge comes after the queue
	// is settled: a Compute suspends the caller, and a waiter must be
	// parked by the time a round can wake it.
	var charge int64
	if busy > 0 {
		charge = cost.CachelineTransfer()
		if val != nil {
			charge += cost.CachelineTransfer()
		}
	}
	if !q.running && me == q.covered+1 {
		q.running = true
		q.snap = 0
		t.mu.Unlock()
		ep.Compute(charge)
		return t.win(ep, q, me, op), false
	}
	w := &waiter[R]{ep: ep, ticket: me}
	q.waiters = append(q.waiters, w)
	t.mu.Unlock()
	ep.Park()
	// A finished round woke us, with its result or to run the next; the
	// handed-over result is one more line to fetch.
	ep.Compute(charge + cost.CachelineTransfer())
	if w.served {
		return w.res, true
	}
	return t.win(ep, q, me, op), false
}

// win runs op as the winner of a round and hands its result to the
// operations the round covers.
func (t *Table[R]) win(ep transport.Endpoint, q *queue[R], me uint64, op func(*Round[R]) R) R {
	q.round = Round[R]{t: t, q: q}
	res := op(&q.round)
	t.mu.Lock()
	end := max(q.snap, me)
	t.sizes.add(int(end - q.covered))
	q.covered = end
	q.running = false
	var wake []*waiter[R]
	rest := q.waiters[:0]
	for _, w := range q.waiters {
		switch {
		case w.ticket <= end:
			w.served, w.res = true, res
			wake = append(wake, w)
		case w.ticket == end+1:
			q.running = true // the next round's winner
			q.snap = 0
			wake = append(wake, w)
		default:
			rest = append(rest, w)
		}
	}
	clear(q.waiters[len(rest):])
	q.waiters = rest
	if q.tickets == q.covered {
		// Nobody holds q now: every waiter was served and returns its
		// result without touching q again.
		delete(t.keys, q.name())
		t.free = append(t.free, q)
	}
	t.mu.Unlock()
	if len(wake) > 0 {
		ep.Compute(cost.CachelineTransfer()) // publishing the result
	}
	for _, w := range wake {
		w.ep.Unpark()
	}
	return res
}

// newQueue returns an empty queue of a copy of key, reusing an idle
// queue and its key's bytes. t.mu is held.
func (t *Table[R]) newQueue(key []byte) *queue[R] {
	n := len(t.free)
	if n == 0 {
		return &queue[R]{key: append([]byte(nil), key...)}
	}
	q := t.free[n-1]
	t.free[n-1] = nil
	t.free = t.free[:n-1]
	*q = queue[R]{key: append(q.key[:0], key...), waiters: q.waiters[:0]}
	return q
}

// name is q's key as the string t.keys holds it, without a copy: the
// bytes stay as they are while the entry exists, since a queue's key
// changes only when newQueue reuses it, after win has deleted the entry.
func (q *queue[R]) name() string { return unsafe.String(unsafe.SliceData(q.key), len(q.key)) }

// Sizes returns the distribution of round sizes so far.
func (t *Table[R]) Sizes() Sizes {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sizes.clone()
}

// setSizes replaces the distribution (Nodes.CopyCounts).
func (t *Table[R]) setSizes(s Sizes) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sizes = s
}
