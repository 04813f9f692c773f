package sherman

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes/internal/inner"
	"github.com/dmbench/dmbench/transport"
)

// Sherman's hierarchical on-chip lock (HOCL), its local half. Each
// compute node keeps a local lock per global lock word. A writer takes the
// local lock before it CASes the global word, so threads of one node
// queue locally instead of hammering the memory node with failed CASes;
// and a holder that sees a local waiter hands the global lock over with
// the local one, without releasing it remotely, at most handover times in
// a row (Sherman's kMaxHandOverTime = 8) so other compute nodes get their
// turn. In P-Sherman the same local locks and their versions are all that
// synchronises nodes inside the node's own partition.

// localLock is one compute node's lock for one global lock word.
type localLock struct {
	// mu is the local lock itself, held across verbs: a ticket lock, as
	// Sherman's (src/Tree.cpp, acquire_local_lock: a fetch-add ticket and
	// a now-serving half in one word; waiters yield their coroutine).
	mu transport.Mutex
	// queued counts writers holding mu or waiting for it: Sherman's
	// ticket lock tells a holder whether anyone is waiting.
	queued atomic.Int32
	// Guarded by mu: whether this compute node holds the global word (it
	// passes with mu on a hand-over), its value then, and how many
	// holders in a row have had it.
	global   bool
	word     uint64
	handTime int
	// seq is the local version of the nodes behind this lock (P-Sherman):
	// odd while a writer of this compute node is writing one of them.
	seq atomic.Uint64
}

// localLockTable is one compute node's local locks, made on first use.
type localLockTable struct {
	slots [][]atomic.Pointer[localLock] // [memory node][lock index]
}

func newLocalLockTable(tables []lockTable) *localLockTable {
	t := &localLockTable{slots: make([][]atomic.Pointer[localLock], len(tables))}
	for m := range tables {
		t.slots[m] = make([]atomic.Pointer[localLock], tables[m].n)
	}
	return t
}

func (t *localLockTable) slot(r lockRef) *localLock {
	p := &t.slots[r.mem][r.index]
	if s := p.Load(); s != nil {
		return s
	}
	p.CompareAndSwap(nil, &localLock{mu: transport.Mutex{Kind: transport.LockTicket}})
	return p.Load()
}

// held is a lock a writer holds on one node.
type held struct {
	ref    lockRef
	slot   *localLock // nil when the local table is bypassed (hocl=false)
	global bool       // the global lock word is held
	word   uint64     // its value while held
}

// lock takes the lock of the node at addr: the local lock (when HOCL or
// partitioning is on), then the global word unless it was handed over
// with the local lock or the node is inside this compute node's partition.
func (c *client) lock(addr transport.GAddr, cls class) (held, error) {
	x := c.x
	h := held{ref: c.lockOf(addr)}
	if x.hocl || x.parts != nil {
		s := x.localTable(c.EP.Node()).slot(h.ref)
		s.queued.Add(1)
		c.Charge(cost.CachelineTransfer()) // the ticket's atomic increment
		c.Flush()
		s.mu.Lock(c.EP)
		s.handTime++
		h.slot = s
		if s.global {
			h.global, h.word = true, s.word
			return h, nil
		}
	}
	if cls == classOwned {
		return h, nil
	}
	w, err := c.acquireGlobal(h.ref.addr)
	if err != nil {
		c.releaseLocal(h)
		return h, err
	}
	h.global, h.word = true, w
	return h, nil
}

// acquireGlobal CASes the lock word at a until it holds it and returns
// the word's locked value. The optlock variant first READs the word for
// its version, as DEX's Sherman READs the version before releasing.
func (c *client) acquireGlobal(a transport.GAddr) (uint64, error) {
	var expect uint64
	if c.x.consistency == optlock {
		if err := c.Read(c.word[:], a); err != nil {
			return 0, fmt.Errorf("reading lock word %v: %w", a, err)
		}
		expect = lockWord(c.word[:]) &^ tagMask
	}
	for range inner.MaxRetries {
		c.Flush()
		old, err := c.EP.CAS(a, expect, expect|c.tag)
		if err != nil {
			return 0, fmt.Errorf("locking %v: %w", a, err)
		}
		if old == expect {
			return expect | c.tag, nil
		}
		expect = old &^ tagMask // the version it will have when released
		if c.x.consistency != optlock {
			expect = 0
		}
		// Sherman retries at once (no wait on the simulator), but on a
		// real fabric, where a CAS can return before the holder's thread
		// runs again, the spinning thread must let it run.
		c.EP.Backoff(0)
	}
	return 0, fmt.Errorf("lock word %v still held after %d CASes", a, inner.MaxRetries)
}

// unlock lands ops (the node's writes) and releases h. The global word is
// handed over to a waiting thread of this compute node when HOCL allows,
// else released by a WRITE posted in the same doorbell batch as ops
// (Sherman's command combination: one QP runs them in order, so the node
// is written before it is unlocked), or after them when combine is off.
func (c *client) unlock(h held, ops ...transport.Op) error {
	x := c.x
	bump := h.slot != nil && x.parts != nil && len(ops) > 0
	if bump {
		h.slot.seq.Add(1)
	}
	var err error
	switch {
	case !h.global:
		err = c.post(ops)
	case x.hocl && h.slot.queued.Load() > 1 && h.slot.handTime < x.handover:
		err = c.post(ops)
		h.slot.global, h.slot.word = true, h.word
	default:
		c.word = releasedWord(h.word, x.consistency)
		rel := transport.WriteOp(h.ref.addr, c.word[:])
		if x.combine {
			err = c.post(append(ops, rel))
		} else if err = c.post(ops); err == nil {
			err = c.post([]transport.Op{rel})
		}
		if h.slot != nil {
			h.slot.global = false
		}
	}
	if bump {
		h.slot.seq.Add(1)
	}
	c.releaseLocal(h)
	if err != nil {
		return fmt.Errorf("writing and unlocking %v: %w", h.ref.addr, err)
	}
	return nil
}

// releaseLocal lets the next local waiter in. A holder that keeps the
// global word for it has set slot.global; any other ends the run of
// hand-overs.
func (c *client) releaseLocal(h held) {
	s := h.slot
	if s == nil {
		return
	}
	if !s.global {
		s.handTime = 0
	}
	s.queued.Add(-1)
	s.mu.Unlock()
}

// releasedWord is the value a holder writes to release a lock word.
func releasedWord(w uint64, v consistency) [8]byte {
	var b [8]byte
	if v == optlock {
		binary.LittleEndian.PutUint64(b[:], (w>>tagBits+1)<<tagBits)
	}
	return b
}
