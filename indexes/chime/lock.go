package chime

import (
	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// Leaf locks. With masked CAS (CHIME's code) the lock is bit 63 of the
// leaf's first word, whose low bits hold the vacancy bitmap: a masked CAS
// that compares and swaps only bit 63 returns the bitmap for free, which
// tells the writer how far past the neighbourhood the nearest free slot
// lies (CHIME's vacancy-aware lock). The writer releases the lock with a
// WRITE of the new bitmap, batched behind its entry WRITEs.
//
// Without masked CAS (maskedcas=false) the lock is a word of its own
// beside the bitmap word, taken by a plain CAS from 0 to 1, as in the
// DMTree artifact's CHIME (aefast26 CHIME/src/Tree.cpp, lock_node and
// unlock_node): a writer that needs the bitmap (an insert) READs the
// bitmap word after the CAS and releases with one 16-byte WRITE of both
// words; other writers release with an 8-byte WRITE of the lock word.
//
// A failed CAS is retried at once, as CHIME's lock_node does after
// yielding its coroutine; writers of one compute node do not queue
// locally first (CHIME's code never calls its local lock table's leaf
// lock), so under contention every waiting client retries its CAS.

// lockLeaf takes the remote lock of leaf and, when vacancy is set or the
// lock is a masked CAS, which returns it anyway, the leaf's vacancy
// bitmap.
func (c *client) lockLeaf(leaf transport.GAddr, vacancy bool) (uint64, error) {
	if c.x.maskedCAS {
		for {
			old, err := c.ep.MaskedCAS(leaf.Add(offLockWord), 0, lockBit, lockBit, lockBit)
			if err != nil {
				return 0, err
			}
			if old&lockBit == 0 {
				return old, nil
			}
			c.ep.Backoff(cost.CachelineTransfer())
		}
	}
	for {
		old, err := c.ep.CAS(leaf.Add(offCASWord), 0, 1)
		if err != nil {
			return 0, err
		}
		if old == 0 {
			break
		}
		c.ep.Backoff(cost.CachelineTransfer())
	}
	if !vacancy {
		return 0, nil
	}
	return c.readWord(leaf.Add(offLockWord))
}

// unlockOp is the WRITE that releases a leaf lock. Under masked CAS it
// writes the bitmap word with bitmap vacancy and the lock bit clear. In
// plain-CAS mode it clears the lock word, writing bitmap vacancy in the
// same WRITE when withVacancy is set (the holder read the bitmap and may
// have changed it).
func (c *client) unlockOp(leaf transport.GAddr, vacancy uint64, withVacancy bool) transport.Op {
	w := vacancy &^ lockBit
	if c.x.maskedCAS {
		buf := make([]byte, 8)
		putWord(buf, w)
		return transport.WriteOp(leaf.Add(offLockWord), buf)
	}
	if !withVacancy {
		return transport.WriteOp(leaf.Add(offCASWord), make([]byte, 8))
	}
	buf := make([]byte, 16)
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
		c.ep.Backoff(cost.CachelineTransfer())
	}
}
