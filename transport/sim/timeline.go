package sim

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
	for i := tl.after(at); i < n; i++ {
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

// after is the index of the first interval that ends after t, or
// len(tl.iv). Ends increase, so a search finds the one answer in any
// order: this one gallops back from the newest interval, as most
// reservations land among the last few, and the slice holds thousands.
func (tl *timeline) after(t int64) int {
	i, j := 0, len(tl.iv)
	for step := 1; j-step >= 0; step *= 2 {
		p := j - step
		if tl.iv[p].e <= t {
			i = p + 1
			break
		}
		j = p
	}
	for i < j {
		h := int(uint(i+j) >> 1)
		if tl.iv[h].e > t {
			j = h
		} else {
			i = h + 1
		}
	}
	return i
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
	n := copy(tl.iv, tl.iv[tl.after(now-pastWindow):])
	tl.iv = tl.iv[:n]
}

// insert puts v, which lies in a gap, in its place, merged with touching
// neighbours. Most often v extends the interval before it, which needs no
// shift of the intervals after it. Room for v is made all the same, so
// that the slice is pruned and grown at the same points whichever way v
// lands.
func (tl *timeline) insert(now int64, v interval) {
	tl.push(now, interval{})
	n := len(tl.iv) - 1
	tl.iv = tl.iv[:n]
	i := tl.after(v.s)
	prev := i > 0 && tl.iv[i-1].e == v.s
	next := i < n && tl.iv[i].s == v.e
	switch {
	case prev && next:
		tl.iv[i-1].e = tl.iv[i].e
		tl.iv = append(tl.iv[:i], tl.iv[i+1:]...)
	case prev:
		tl.iv[i-1].e = v.e
	case next:
		tl.iv[i].s = v.s
	default:
		tl.iv = tl.iv[:n+1]
		copy(tl.iv[i+1:], tl.iv[i:n])
		tl.iv[i] = v
	}
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
