package chime

import (
	"sync"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// Leaf locks. The lock word is the first 8 bytes of a leaf: bit 63 is the
// lock, the low bits the vacancy bitmap. Locking with a masked CAS that
// compares and swaps only bit 63 returns the bitmap for free, which tells
// the writer how far past the neighbourhood the nearest free slot lies
// (CHIME's vacancy-aware lock). The writer releases the lock with a WRITE
// of the new bitmap, batched behind its entry WRITEs.
//
// Writers of one compute node first queue on a local lock of the leaf
// (CHIME's local lock table, after Sherman's HOCL), so remote lock
// retries come only from other compute nodes.

const localLocks = 4096

type localLockTable struct{ stripes [localLocks]transport.Mutex }

// newLocalLockTable makes ticket locks, the kind of CHIME's
// include/LocalLockTable.h (its tickets; waiters yield their coroutine).
func newLocalLockTable() *localLockTable {
	t := &localLockTable{}
	for i := range t.stripes {
		t.stripes[i].Kind = transport.LockTicket
	}
	return t
}

func (t *localLockTable) of(a transport.GAddr) *transport.Mutex {
	return &t.stripes[uint64(a)*0x9e3779b97f4a7c15>>52]
}

// lockHints remembers the last lock word seen per leaf, for fabrics
// without masked CAS: a plain CAS must name the whole word it expects.
type lockHints struct {
	mu    sync.Mutex // never held across a verb
	addrs [localLocks]transport.GAddr
	words [localLocks]uint64
}

func newLockHints() *lockHints { return &lockHints{} }

func (h *lockHints) get(a transport.GAddr) uint64 {
	i := uint64(a) * 0x9e3779b97f4a7c15 >> 52
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.addrs[i] == a {
		return h.words[i]
	}
	return 0
}

func (h *lockHints) put(a transport.GAddr, w uint64) {
	i := uint64(a) * 0x9e3779b97f4a7c15 >> 52
	h.mu.Lock()
	defer h.mu.Unlock()
	h.addrs[i], h.words[i] = a, w&^lockBit
}

// lockLeaf takes the remote lock of leaf and returns its vacancy bitmap.
// The caller holds the leaf's local lock.
func (c *client) lockLeaf(leaf transport.GAddr) (uint64, error) {
	if c.x.maskedCAS {
		for {
			old, err := c.ep.MaskedCAS(leaf.Add(offLockWord), 0, lockBit, lockBit, lockBit)
			if err != nil {
				return 0, err
			}
			if old&lockBit == 0 {
				return old, nil
			}
			c.ep.Compute(cost.CachelineTransfer())
		}
	}
	// Without masked CAS the whole word is compared: guess the bitmap
	// from the last word seen, and on a miss retry with the word the
	// failed CAS returned.
	expect := c.hints.get(leaf)
	for {
		old, err := c.ep.CAS(leaf.Add(offLockWord), expect, expect|lockBit)
		if err != nil {
			return 0, err
		}
		if old == expect {
			return old, nil
		}
		if old&lockBit != 0 {
			c.ep.Compute(cost.CachelineTransfer())
		}
		expect = old &^ lockBit
	}
}

// unlockOp is the WRITE that releases a leaf lock with bitmap vacancy.
func (c *client) unlockOp(leaf transport.GAddr, vacancy uint64) transport.Op {
	w := vacancy &^ lockBit
	if c.hints != nil {
		c.hints.put(leaf, w)
	}
	buf := make([]byte, 8)
	putWord(buf, w)
	return transport.WriteOp(leaf.Add(offLockWord), buf)
}

// lockInner takes an internal node's lock (a plain CAS: the word holds
// nothing but the lock bit).
func (c *client) lockInner(a transport.GAddr) error {
	for {
		old, err := c.ep.CAS(a.Add(inLock), 0, lockBit)
		if err != nil {
			return err
		}
		if old == 0 {
			return nil
		}
		c.ep.Compute(cost.CachelineTransfer())
	}
}
