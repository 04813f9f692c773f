package transport

import "sync"

// Mutex is a compute-node-local lock that may be held across verbs. A
// waiter parks through its Endpoint: in virtual time on the simulator, for
// real on the real fabrics. Waiters are served in FIFO order and the lock is
// handed to the first waiter directly, so the order is deterministic.
// The zero value is unlocked.
type Mutex struct {
	mu      sync.Mutex // guards the fields below; never held across Park
	held    bool
	waiters []Endpoint
}

// Lock acquires m for ep.
func (m *Mutex) Lock(ep Endpoint) {
	m.mu.Lock()
	if !m.held {
		m.held = true
		m.mu.Unlock()
		return
	}
	m.waiters = append(m.waiters, ep)
	m.mu.Unlock()
	ep.Park() // woken by Unlock with the lock already ours
}

// TryLock acquires m if it is free.
func (m *Mutex) TryLock() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.held {
		return false
	}
	m.held = true
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
	m.waiters[0] = nil
	m.waiters = m.waiters[1:]
	m.mu.Unlock()
	next.Unpark()
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
