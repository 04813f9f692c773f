package sim

import "sort"

// timeline is a NIC resource (message processing, a link direction, the
// atomic unit) that knows its future. The simulator reserves a verb's
// later stages when it processes an earlier one: a response's trip over
// the requester's receive link is booked when the request reaches the
// responder, about a microsecond ahead. A plain next-free server would
// then make a request that arrives at that link in the meantime wait
// behind the booking, though the link is idle until then; on a node that
// both issues and serves verbs (DMTree's compute nodes) that false
// queueing compounds. A timeline instead keeps the booked busy intervals
// and serves a reservation in the first gap long enough for it: what the
// link would do, since the booked packet has not been sent yet.
//
// Busy intervals are kept sorted and non-overlapping, adjacent ones
// merged, so a saturated resource is one interval and a reservation at or
// after the last one (the common case) costs O(1) and touches only the
// newest interval.
type timeline struct {
	iv   []interval // busy intervals, sorted
	busy int64      // ps reserved since the last reset
}

type interval struct{ s, e int64 }

// pastWindow is how far behind now a reservation may start: a link is
// booked from when a message's first byte arrives, up to its
// serialisation time before the arrival event (80 us covers a 1 MB
// message at 100 Gb/s). Intervals that ended earlier are dropped.
const pastWindow = 80_000_000 // ps

// serve reserves d ps starting no earlier than at, in the first gap that
// fits, and returns the end. now is the current time.
func (tl *timeline) serve(now, at, d int64) int64 {
	tl.busy += d
	n := len(tl.iv)
	if n == 0 || at >= tl.iv[n-1].e {
		if n > 0 && at == tl.iv[n-1].e {
			tl.iv[n-1].e += d
		} else {
			tl.push(now, interval{at, at + d})
		}
		return at + d
	}
	s := at
	for i := sort.Search(n, func(k int) bool { return tl.iv[k].e > at }); i < n; i++ {
		cur := tl.iv[i]
		if s+d <= cur.s { // the gap before interval i fits
			tl.insert(now, interval{s, s + d})
			return s + d
		}
		s = max(s, cur.e)
	}
	tl.push(now, interval{s, s + d})
	tl.mergeAt(len(tl.iv) - 1)
	return s + d
}

// push appends v. Past intervals are dropped only when the slice is full:
// then in one sequential pass, rather than a look at the oldest interval
// (a cold cache line) on every reservation.
func (tl *timeline) push(now int64, v interval) {
	if len(tl.iv) == cap(tl.iv) {
		tl.prune(now)
	}
	tl.iv = append(tl.iv, v)
}

// prune drops the intervals that ended before the window.
func (tl *timeline) prune(now int64) {
	h := sort.Search(len(tl.iv), func(k int) bool { return tl.iv[k].e > now-pastWindow })
	n := copy(tl.iv, tl.iv[h:])
	tl.iv = tl.iv[:n]
}

// insert puts v, which lies in a gap, in its place and merges it with
// touching neighbours.
func (tl *timeline) insert(now int64, v interval) {
	tl.push(now, interval{})
	n := len(tl.iv) - 1
	i := sort.Search(n, func(k int) bool { return tl.iv[k].e > v.s })
	copy(tl.iv[i+1:], tl.iv[i:n])
	tl.iv[i] = v
	tl.mergeAt(i)
}

// mergeAt joins interval i with its neighbours where they touch.
func (tl *timeline) mergeAt(i int) {
	if i+1 < len(tl.iv) && tl.iv[i].e == tl.iv[i+1].s {
		tl.iv[i].e = tl.iv[i+1].e
		tl.iv = append(tl.iv[:i+1], tl.iv[i+2:]...)
	}
	if i > 0 && tl.iv[i-1].e == tl.iv[i].s {
		tl.iv[i-1].e = tl.iv[i].e
		tl.iv = append(tl.iv[:i], tl.iv[i+1:]...)
	}
}
