package smart

import (
	"encoding/binary"
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

// Leaf locks: the lock byte's bit 0, taken by a masked CAS that compares
// the lock and dead bits and sets the lock bit of the aligned word holding
// the lock byte (SMART's embedded lock). Without masked CAS the whole
// word is compared: the first CAS expects the word as the leaf's READ
// showed it, unlocked, and each retry the word the failed CAS returned.
// The holder releases the lock with the WRITE that carries its change.
// P-SMART's writers of their own partition take a local lock instead.
//
// variant=dex: the lock is a word of its own, taken by a plain CAS from 0
// to all ones and retried with the same CAS while it fails (DEX's copy,
// src/smart.cpp:529-532 and 581-589); a dead leaf's word is lockDead.

// lockLeaf locks the leaf at a, whose image raw the caller read; errDead
// if it was deleted meanwhile.
func (c *client) lockLeaf(a transport.GAddr, raw []byte, owned bool) error {
	if owned {
		if !c.cn.locks.lock(c.ep, a) {
			return errDead
		}
		return nil
	}
	ll := c.ll
	word := a.Add(uint64(ll.lockWord))
	if ll.wholeWord {
		for {
			old, err := c.ep.CAS(word, 0, dexLocked)
			if err != nil {
				return fmt.Errorf("locking leaf %v: %w", a, err)
			}
			switch old {
			case 0:
				return nil
			case lockDead:
				return errDead
			}
			c.ep.Compute(cost.CachelineTransfer())
		}
	}
	held := ll.lockBit | ll.deadBit
	if c.x.maskedCAS {
		for {
			old, err := c.ep.MaskedCAS(word, 0, ll.lockBit, held, ll.lockBit)
			if err != nil {
				return fmt.Errorf("locking leaf %v: %w", a, err)
			}
			if old&held == 0 {
				return nil
			}
			if old&ll.deadBit != 0 {
				return errDead
			}
			c.ep.Compute(cost.CachelineTransfer())
		}
	}
	var w [8]byte
	copy(w[:], raw[ll.lockWord:])
	expect := binary.LittleEndian.Uint64(w[:]) &^ held
	for {
		old, err := c.ep.CAS(word, expect, expect|ll.lockBit)
		if err != nil {
			return fmt.Errorf("locking leaf %v: %w", a, err)
		}
		if old == expect {
			return nil
		}
		if old&ll.deadBit != 0 {
			return errDead
		}
		if old&ll.lockBit != 0 {
			c.ep.Compute(cost.CachelineTransfer())
		}
		expect = old &^ held
	}
}

// owned reports whether this client locks leaves of key locally
// (P-SMART).
func (c *client) owned(key []byte) bool {
	return c.x.parts != nil && c.x.parts.owner(key) == c.ep.Node()
}

// updateLeaf updates a found leaf in place: lock, then one WRITE of
// everything after the reverse pointer (the whole leaf with variant=dex)
// with the new value, its CRC and the lock cleared.
func (c *client) updateLeaf(key []byte, out outcome, val func() []byte) error {
	owned := c.owned(key)
	if err := c.lockLeaf(out.leafAddr, out.raw, owned); err != nil {
		return err
	}
	v := val()
	c.ep.Compute(cost.Checksum(c.ll.ks + c.ll.vs))
	off, b := c.ll.rewrite(out.lf.rev, key, v, true, 0)
	err := c.ep.Write(out.leafAddr.Add(uint64(off)), b)
	if owned {
		c.cn.locks.unlock(out.leafAddr, false)
	}
	if err != nil {
		return fmt.Errorf("writing leaf %v: %w", out.leafAddr, err)
	}
	return nil
}

// remove deletes key: lock its leaf, WRITE it invalid and dead (it stays
// locked for good), then CAS its slot to a tombstone that keeps the
// slot's partial key. If a leaf split moved the leaf's entry into a new
// node meanwhile, the CAS follows it there.
func (c *client) remove(key []byte) error {
	h, err := c.start(key)
	if err != nil {
		return err
	}
	for {
		out, err := c.descend(key, h, true)
		if err != nil {
			return err
		}
		if out.end != endFound {
			return indexes.ErrNotFound
		}
		owned := c.owned(key)
		if err := c.lockLeaf(out.leafAddr, out.raw, owned); err != nil {
			if err == errDead {
				if h, err = c.reread(out.h); err != nil {
					return err
				}
				continue
			}
			return err
		}
		off, b := c.ll.rewrite(out.lf.rev, key, out.lf.val, false, lockDead)
		err = c.ep.Write(out.leafAddr.Add(uint64(off)), b)
		if owned {
			c.cn.locks.unlock(out.leafAddr, true)
		}
		if err != nil {
			return fmt.Errorf("writing leaf %v: %w", out.leafAddr, err)
		}
		return c.unlink(key, out.leafAddr, out.h)
	}
}

// unlink swings the slot holding the dead leaf at a to a tombstone.
func (c *client) unlink(key []byte, a transport.GAddr, h hop) error {
	entry := leafSlot(partialOf(h.p), a, c.ll.size)
	pPtr := h.pPtr
	for {
		old, err := c.ep.CAS(pPtr, entry, tombstone(partialOf(entry)))
		if err != nil {
			return fmt.Errorf("CAS slot %v: %w", pPtr, err)
		}
		if old == entry {
			return nil
		}
		// The entry moved down into the node(s) a leaf split put here.
		pPtr, entry = 0, 0
		for s := old; isNode(s) && pPtr == 0; {
			n, err := c.readNode(s)
			if err != nil {
				return err
			}
			next := uint64(0)
			for i, e := range n.slots {
				if isLeaf(e) && slotTarget(e) == a {
					pPtr, entry = slotAddr(slotTarget(s), i), e
					break
				}
			}
			if d := n.hdr.depth + n.hdr.plen; pPtr == 0 && d < len(key) {
				if i, _ := findSlot(n.slots, key[d]); i >= 0 {
					next = n.slots[i]
				}
			}
			s = next
		}
		if pPtr == 0 {
			return nil // an insert already replaced the dead leaf
		}
	}
}
