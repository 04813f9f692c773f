package blink

import (
	"encoding/binary"
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// expectFrom is the rear word a lock attempt expects after seeing rear
// word w: w itself when free, else the version its holder will release
// (writers release version+1; one that changed nothing restores w's
// version, and the next attempt learns that from its failed CAS).
func expectFrom(w uint64) uint64 {
	if w&lockBit != 0 {
		return unlockedWord(w>>1 + 1)
	}
	return w
}

// lock takes the exclusive lock of the node that holds key at a's level,
// starting at node a whose rear word was last seen as w. FG's exclusive
// latch: a CAS of the lock word posted with a READ of the node in one
// doorbell batch (one round trip). Here the lock word is the rear word,
// version and lock bit, so the CAS also checks the version. On success the
// READ, ordered after the CAS on the QP, is the image to modify, in c.lk;
// it is read again until whole, since the previous holder's WRITE may
// still be landing (strict memory mode: its rear word need not land
// last). A node that no longer holds key (a concurrent split moved it
// right) is unlocked unchanged and the lock taken on its right sibling.
func (c *client) lock(a transport.GAddr, w uint64, key []byte) (transport.GAddr, error) {
	l := &c.x.l
	expect := expectFrom(w)
	for range maxRetries {
		rearA := a.Add(l.rearOffset())
		c.ops[0] = transport.CASOp(rearA, expect, expect|lockBit)
		c.ops[1] = transport.ReadOp(c.lk, a)
		if err := c.post(c.ops[:]...); err != nil {
			return 0, fmt.Errorf("locking node %v: %w", a, err)
		}
		old := c.ops[0].Old
		if old != expect {
			c.ep.Backoff(0) // let the holder run on real fabrics; free on sim
			expect = expectFrom(old)
			// The image read behind the failed CAS tells whether key
			// has moved right meanwhile.
			c.chargeCRC(cost.Checksum(len(c.lk)))
			if consistent(c.lk) && l.beyond(c.lk, key) {
				var err error
				if a, expect, err = c.right(a, c.lk); err != nil {
					return 0, err
				}
			}
			continue
		}
		if err := c.settle(a); err != nil {
			return 0, err
		}
		if !l.beyond(c.lk, key) {
			return a, nil
		}
		if err := c.unlock(a, expect>>1); err != nil {
			return 0, err
		}
		var err error
		if a, expect, err = c.right(a, c.lk); err != nil {
			return 0, err
		}
	}
	return 0, fmt.Errorf("node %v: lock not taken after %d attempts", a, maxRetries)
}

// right reads the right sibling of node a (image img) optimistically and
// returns it with the rear word a lock attempt on it expects.
func (c *client) right(a transport.GAddr, img []byte) (transport.GAddr, uint64, error) {
	next := sibling(img)
	if next.IsNil() {
		return 0, 0, fmt.Errorf("node %v ends at %x with no right sibling", a, c.x.l.high(img))
	}
	if err := c.readNode(c.buf, next); err != nil {
		return 0, 0, err
	}
	return next, expectFrom(rear(c.buf)), nil
}

// settle makes c.lk, read right after this client's CAS took the lock of
// node a, a whole image: READ again while it is not.
func (c *client) settle(a transport.GAddr) error {
	for range maxRetries {
		c.chargeCRC(cost.Checksum(len(c.lk)))
		if consistent(c.lk) {
			return nil
		}
		c.ep.Backoff(0) // let the writer run on real fabrics; free on sim
		if err := c.read(c.lk, a); err != nil {
			return fmt.Errorf("re-reading locked node %v: %w", a, err)
		}
	}
	return fmt.Errorf("locked node %v: no consistent image after %d READs", a, maxRetries)
}

// unlock releases the lock of node a, left unchanged at version v: one
// 8-byte WRITE of its rear word (the CRC leaves the lock bit out, so the
// node checks either way).
func (c *client) unlock(a transport.GAddr, v uint64) error {
	binary.LittleEndian.PutUint64(c.word[:], unlockedWord(v))
	if err := c.write(a.Add(c.x.l.rearOffset()), c.word[:]); err != nil {
		return fmt.Errorf("unlocking node %v: %w", a, err)
	}
	return nil
}

// release writes the locked node img back to a whole at the next version
// with its lock free: the write-ordering optimisation of SPREAD's B-link
// tree. The rear word is the node's last word, and an RDMA WRITE lands in
// increasing address order, so one WRITE both installs the node and
// releases the lock, where FG WRITEs the node and then CASes the lock
// free.
func (c *client) release(a transport.GAddr, img []byte) error {
	seal(img, version(img)+1)
	c.chargeCRC(cost.Checksum(len(img)))
	if err := c.write(a, img); err != nil {
		return fmt.Errorf("writing node %v: %w", a, err)
	}
	return nil
}
