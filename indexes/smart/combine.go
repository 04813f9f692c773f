package smart

import (
	"bytes"
	"sync/atomic"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// localTable is a compute node's local lock table for read delegation and
// write combining (SMART section 4.3): a client that searches a key
// another client of its compute node is already searching waits and
// takes that client's answer; a client that writes a key another client
// is writing hands it its value and waits. Each bucket is a cache line
// the node's threads contend on, so it is a transport Mutex held while
// its holder pays a cache-line transfer.
//
// Two rules keep this linearizable where the artifact's table is not
// (see doc.go): a waiter takes the leader's answer only if it joined
// before the leader posted the READ the answer rests on, and its value
// rides on the leader's WRITE only if it joined before the leader took
// the values (just before that WRITE). Every other waiter is woken to try
// again when the leader finishes; a searcher that arrives once the leader
// has posted its READ of the leaf searches on its own instead of waiting
// for an answer it could not take.
type localTable struct {
	buckets [tableBuckets]bucket
}

const tableBuckets = 1024

type bucket struct {
	mu transport.Mutex
	// reads holds the groups searching the bucket's keys, a few at most:
	// a scan of them costs less than a map, whose insert allocates a
	// string for the key.
	reads  []*readGroup
	writes map[string]*writeGroup
}

// newLocalTable makes the table with ticket locks, as SMART's
// LocalLockTable.h (acquire_local_read_lock / acquire_local_write_lock:
// 8-bit tickets, waiters yield their coroutine).
func newLocalTable() *localTable {
	t := &localTable{}
	for i := range t.buckets {
		t.buckets[i].mu.Kind = transport.LockTicket
	}
	return t
}

func (t *localTable) bucket(key []byte) *bucket {
	// A fixed-seed FNV-1a spreads keys over buckets deterministically.
	h := uint64(14695981039346656037)
	for _, b := range key {
		h = (h ^ uint64(b)) * 1099511628211
	}
	return &t.buckets[h%tableBuckets]
}

func (b *bucket) lock(ep transport.Endpoint) {
	b.mu.Lock(ep)
	ep.Compute(cost.CachelineTransfer())
}

// readGroup is the searches of one key led by one client.
type readGroup struct {
	key     []byte       // the leader's key, unchanged while it searches
	posts   atomic.Int64 // READs the leader has posted
	leaf    atomic.Bool  // the leader has posted its READ of the leaf
	waiters []*reader
}

type reader struct {
	gate   transport.Gate
	joined int64 // the leader's posts when this reader joined
	served bool
	val    []byte
	found  bool
	err    error
}

// joinRead makes the caller the leader of key's searches (nil reader), a
// waiter on the current leader, or, when the leader has already posted
// its READ of the leaf (whose answer a later caller could not take), a
// searcher on its own (nil group). A leader's group is own, the caller's
// to reuse once finishRead has ended it: waiters keep only their reader.
func (t *localTable) joinRead(ep transport.Endpoint, key []byte, own *readGroup) (*readGroup, *reader) {
	b := t.bucket(key)
	b.lock(ep)
	defer b.mu.Unlock()
	for _, g := range b.reads {
		if !bytes.Equal(g.key, key) {
			continue
		}
		if g.leaf.Load() {
			return nil, nil
		}
		r := &reader{joined: g.posts.Load()}
		g.waiters = append(g.waiters, r)
		return g, r
	}
	own.key = key
	own.posts.Store(0)
	own.leaf.Store(false)
	own.waiters = own.waiters[:0]
	b.reads = append(b.reads, own)
	return own, nil
}

// posted counts a READ the leader posts, saying whether it reads a leaf.
func (g *readGroup) posted(leaf bool) {
	g.posts.Add(1)
	if leaf {
		g.leaf.Store(true)
	}
}

// finishRead ends the leader's search: waiters that joined before READ
// number final, the one its answer rests on, get the answer; the others
// are woken to search again.
func (t *localTable) finishRead(ep transport.Endpoint, key []byte, g *readGroup, final int64, val []byte, found bool, err error) {
	b := t.bucket(key)
	b.lock(ep)
	for i, o := range b.reads {
		if o == g {
			last := len(b.reads) - 1
			b.reads[i], b.reads[last] = b.reads[last], nil
			b.reads = b.reads[:last]
			break
		}
	}
	waiters := g.waiters
	b.mu.Unlock()
	for _, r := range waiters {
		if r.joined < final {
			r.served, r.val, r.found, r.err = true, val, found, err
		}
		r.gate.Open()
	}
}

// writeGroup is the writes of one key led by one client.
type writeGroup struct {
	open    bool   // the leader has not taken the values yet
	pending []byte // the last value handed over
	waiters []*writer
}

type writer struct {
	gate transport.Gate
	done bool // the leader's WRITE carried this writer's value
	err  error
}

// joinWrite makes the caller the leader of key's writes (nil writer) or
// a waiter whose value the leader will write.
func (t *localTable) joinWrite(ep transport.Endpoint, key, val []byte) (*writeGroup, *writer) {
	b := t.bucket(key)
	b.lock(ep)
	defer b.mu.Unlock()
	if g := b.writes[string(key)]; g != nil {
		w := &writer{}
		if g.open {
			g.pending = append(g.pending[:0], val...)
		}
		g.waiters = append(g.waiters, w)
		return g, w
	}
	if b.writes == nil {
		b.writes = map[string]*writeGroup{}
	}
	g := &writeGroup{open: true}
	b.writes[string(key)] = g
	return g, nil
}

// take closes the group to new values just before the leader's WRITE and
// returns the value to write: the last one handed over, or the leader's.
// Calling it again returns the value taken the first time.
func (t *localTable) take(ep transport.Endpoint, key []byte, g *writeGroup, own []byte, taken *[]byte, riders *[]*writer) []byte {
	if *taken != nil {
		return *taken
	}
	b := t.bucket(key)
	b.lock(ep)
	v := own
	if g.pending != nil {
		v = append([]byte(nil), g.pending...)
	}
	g.open = false
	*riders = g.waiters
	g.waiters = nil
	b.mu.Unlock()
	*taken = v
	return v
}

// takeIfSame takes the leader's own value, as take does, if no other
// writer has handed one over and it equals cur, the value the leader's
// READ found: the write is then a no-op that needs no lock and no WRITE.
// With a value handed over it is not: that writer may have called after
// the READ, so its value must be written.
func (t *localTable) takeIfSame(ep transport.Endpoint, key []byte, g *writeGroup, own, cur []byte, taken *[]byte, riders *[]*writer) bool {
	if *taken != nil || !bytes.Equal(own, cur) {
		return false
	}
	b := t.bucket(key)
	b.lock(ep)
	defer b.mu.Unlock()
	if g.pending != nil {
		return false
	}
	g.open = false
	*riders = g.waiters
	g.waiters = nil
	*taken = own
	return true
}

// finishWrite ends the leader's write: the riders share its outcome, the
// writers that came later are woken to write again.
func (t *localTable) finishWrite(ep transport.Endpoint, key []byte, g *writeGroup, riders []*writer, err error) {
	b := t.bucket(key)
	b.lock(ep)
	delete(b.writes, string(key))
	later := g.waiters
	b.mu.Unlock()
	for _, w := range riders {
		w.done, w.err = true, err
		w.gate.Open()
	}
	for _, w := range later {
		w.gate.Open()
	}
}
