package transport

import (
	"fmt"
	"sync"

	"github.com/dmbench/dmbench/cost"
)

// LockKind is how a compute-node-local lock makes its waiters wait. It
// decides what handing the lock from one core to the next costs when
// several cores want it, the physics behind the collapse of
// non-scalable locks (Boyd-Wickizer, Kaashoek, Morris and Zeldovich,
// "Non-scalable locks are dangerous", Linux Symposium 2012):
// with waiters spinning on one shared word, a release invalidates every
// spinner's copy of the line and their re-reads are served one at a time,
// so the time for the lock to reach its next holder grows linearly with
// the cores waiting; with a queue lock each waiter spins on its own line
// and a handoff moves one line whatever the number of waiters.
type LockKind uint8

const (
	// LockQueue is a queue lock (MCS, CLH) or one whose waiters sleep: a
	// handoff to another core moves one cache line.
	LockQueue LockKind = iota
	// LockTicket is a ticket lock: waiters spin on the now-serving word.
	LockTicket
	// LockSpin is a test-and-set or test-and-test-and-set spinlock:
	// waiters spin on the lock word and race for it on every release.
	LockSpin
)

// String names the kind.
func (k LockKind) String() string {
	switch k {
	case LockQueue:
		return "queue"
	case LockTicket:
		return "ticket"
	case LockSpin:
		return "spin"
	}
	return fmt.Sprintf("LockKind(%d)", uint8(k))
}

// HandoffNs is the time for a released lock of kind k to reach a waiter
// on another core while spinners cores (the new holder's included) wait
// for it, in cache-line transfers of cost.CachelineTransfer:
//   - queue: 1, the new holder's own line;
//   - ticket and spin: 1 + (spinners-1)/2. The release's invalidation
//     and the new holder's fetch, behind on average half of the other
//     spinners' fetches, which the line's home serves one at a time
//     (the Markov model of ticket locks in Boyd-Wickizer et al.). A
//     spinlock's waiters race with atomic exchanges rather than reads;
//     the winner is as likely to be any of them, which gives the same
//     mean. dmbench still
//     hands a spinlock over in arrival order, so that runs stay
//     deterministic: its unfairness is not modelled, its cost is.
func (k LockKind) HandoffNs(spinners int) int64 {
	t := cost.CachelineTransfer()
	if k == LockQueue || spinners <= 1 {
		return t
	}
	return t + t*int64(spinners-1)/2
}

// Mutex is a compute-node-local lock that may be held across verbs. A
// waiter parks through its Endpoint: in virtual time on the simulator, for
// real on the real fabrics. Waiters are served in FIFO order and the lock is
// handed to the first waiter directly, so the order is deterministic.
//
// A handoff between cores costs the new holder Kind.HandoffNs of the
// cores then waiting, charged as Compute (so only the simulator sees it;
// on real hardware the lock is real). Waiting coroutines of one thread
// count as one core: they take turns on it. A handoff between coroutines
// of one thread is free. Uncontended acquisitions cost nothing here: an
// index charges the lines its critical section moves itself.
// The zero value is an unlocked queue lock.
type Mutex struct {
	Kind LockKind

	mu      sync.Mutex // guards the fields below; never held across Park
	held    bool
	owner   core
	waiters []*lockWaiter
	// perCore counts the waiters of each core, spinners the cores with
	// any: kept as waiters come and go, since a node's hot lock can have
	// hundreds of them.
	perCore  map[core]int
	spinners int
}

// core names the core an endpoint runs on.
type core struct {
	node   NodeID
	thread int
}

func coreOf(ep Endpoint) core { return core{node: ep.Node(), thread: ep.Thread()} }

// lockWaiter is one parked Lock call: Unlock sets what its handoff cost.
type lockWaiter struct {
	ep      Endpoint
	core    core
	handoff int64
}

// Lock acquires m for ep.
func (m *Mutex) Lock(ep Endpoint) {
	m.mu.Lock()
	if !m.held {
		m.held = true
		m.owner = coreOf(ep)
		m.mu.Unlock()
		return
	}
	w := &lockWaiter{ep: ep, core: coreOf(ep)}
	m.waiters = append(m.waiters, w)
	if m.perCore == nil {
		m.perCore = make(map[core]int)
	}
	if m.perCore[w.core]++; m.perCore[w.core] == 1 {
		m.spinners++
	}
	m.mu.Unlock()
	ep.Park() // woken by Unlock with the lock already ours
	ep.Compute(w.handoff)
}

// TryLock acquires m if it is free. The holder's core is not known, so
// a handoff from it counts as one between cores.
func (m *Mutex) TryLock() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.held {
		return false
	}
	m.held = true
	m.owner = core{thread: -1}
	return true
}

// Unlock releases m, handing it to the oldest waiter if there is one.
func (m *Mutex) Unlock() {
	m.mu.Lock()
	if !m.held {
		m.mu.Unlock()
		panic("transport: Unlock of unlocked Mutex")
	}
	if len(m.waiters) == 0 {
		m.held = false
		m.mu.Unlock()
		return
	}
	next := m.waiters[0]
	if next.core != m.owner {
		next.handoff = m.Kind.HandoffNs(m.spinners)
	}
	if m.perCore[next.core]--; m.perCore[next.core] == 0 {
		delete(m.perCore, next.core)
		m.spinners--
	}
	m.owner = next.core
	m.waiters[0] = nil
	m.waiters = m.waiters[1:]
	m.mu.Unlock()
	next.ep.Unpark()
}

// RWMutex is a reader/writer lock that may be held across verbs. Waiters
// are served in FIFO order: a queued writer blocks later readers, so
// writers do not starve. The zero value is unlocked.
type RWMutex struct {
	mu      sync.Mutex
	readers int  // readers holding the lock
	writer  bool // a writer holds the lock
	waiters []rwWaiter
}

type rwWaiter struct {
	ep    Endpoint
	write bool
}

// RLock acquires a shared hold for ep.
func (m *RWMutex) RLock(ep Endpoint) {
	m.mu.Lock()
	if !m.writer && len(m.waiters) == 0 {
		m.readers++
		m.mu.Unlock()
		return
	}
	m.waiters = append(m.waiters, rwWaiter{ep: ep})
	m.mu.Unlock()
	ep.Park()
}

// Lock acquires the exclusive hold for ep.
func (m *RWMutex) Lock(ep Endpoint) {
	m.mu.Lock()
	if !m.writer && m.readers == 0 && len(m.waiters) == 0 {
		m.writer = true
		m.mu.Unlock()
		return
	}
	m.waiters = append(m.waiters, rwWaiter{ep: ep, write: true})
	m.mu.Unlock()
	ep.Park()
}

// RUnlock releases a shared hold.
func (m *RWMutex) RUnlock() {
	m.mu.Lock()
	if m.readers == 0 {
		m.mu.Unlock()
		panic("transport: RUnlock of RWMutex not read-locked")
	}
	m.readers--
	m.wakeLocked()
}

// Unlock releases the exclusive hold.
func (m *RWMutex) Unlock() {
	m.mu.Lock()
	if !m.writer {
		m.mu.Unlock()
		panic("transport: Unlock of RWMutex not write-locked")
	}
	m.writer = false
	m.wakeLocked()
}

// wakeLocked grants the lock to the waiters at the head of the queue that
// can hold it together, then releases m.mu and unparks them.
func (m *RWMutex) wakeLocked() {
	var wake []Endpoint
	for len(m.waiters) > 0 && !m.writer {
		w := m.waiters[0]
		if w.write {
			if m.readers > 0 {
				break
			}
			m.writer = true
		} else {
			m.readers++
		}
		wake = append(wake, w.ep)
		m.waiters[0] = rwWaiter{}
		m.waiters = m.waiters[1:]
	}
	m.mu.Unlock()
	for _, ep := range wake {
		ep.Unpark()
	}
}

// Gate holds endpoints back until it is opened, once: the runner starts a
// spare compute node's clients when a repartitioning hands it keys. The
// zero value is closed.
type Gate struct {
	mu      sync.Mutex
	open    bool
	waiters []Endpoint
}

// Wait returns once g is open, parking ep until then.
func (g *Gate) Wait(ep Endpoint) {
	g.mu.Lock()
	if g.open {
		g.mu.Unlock()
		return
	}
	g.waiters = append(g.waiters, ep)
	g.mu.Unlock()
	ep.Park()
}

// Open releases every waiter, in the order they arrived, and lets later
// callers of Wait through.
func (g *Gate) Open() {
	g.mu.Lock()
	g.open = true
	waiters := g.waiters
	g.waiters = nil
	g.mu.Unlock()
	for _, ep := range waiters {
		ep.Unpark()
	}
}
