package sherman

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes/internal/inner"
	"github.com/dmbench/dmbench/transport"
)

// readNode READs the node at addr into buf until the image is consistent
// by the rules of the variant and of the node's class:
//
//	versions  one READ; the node's front and rear versions must agree
//	optlock   READ the lock word until it is free, READ the node, READ the
//	          lock word again; both words equal (DEX Algorithm 1, lines
//	          1-10), or with optcheck=dex the test of DEX's code
//	          (lockWordsAccept)
//	crc       one READ; the node's CRC must match its bytes
//	owned     one READ (P-Sherman): this compute node's writers of the node
//	          are the only ones, and its local version must not move
//
// In P-Sherman every read also checks the local version of the node's lock
// slot, because a writer of this compute node may have taken a node for
// owned that this reader reached through an older parent, and a node of
// another partition, whose writers only that partition's compute node
// sees, is checked by its own versions or checksum. Entry versions are the
// callers' part (checkEntries).
func (c *client) readNode(buf []byte, addr transport.GAddr, cls class) error {
	x := c.x
	var slot *localLock
	var ref lockRef
	if x.parts != nil || (x.consistency == optlock && cls == classShared) {
		ref = c.lockOf(addr)
	}
	if x.parts != nil {
		slot = x.localTable(c.EP.Node()).slot(ref)
	}
	for range inner.MaxRetries {
		var seq uint64
		if slot != nil {
			if seq = slot.seq.Load(); seq&1 == 1 {
				c.waitLocal(slot)
				continue
			}
		}
		ok, err := c.readOnce(buf, addr, ref, cls)
		if err != nil {
			return err
		}
		if ok && slot != nil && slot.seq.Load() != seq {
			ok = false
		}
		if ok {
			return nil
		}
		c.EP.Backoff(0) // as acquireGlobal: free on the simulator
	}
	return fmt.Errorf("node %v still inconsistent after %d reads", addr, inner.MaxRetries)
}

// ReadNode is readNode for the internal-node layer: the class of the node
// follows from the range its parent gave it.
func (c *client) ReadNode(buf []byte, addr transport.GAddr, rng inner.KeyRange) error {
	return c.readNode(buf, addr, c.classOf(rng))
}

// readOnce is one attempt of readNode.
func (c *client) readOnce(buf []byte, addr transport.GAddr, ref lockRef, cls class) (bool, error) {
	guarded := c.x.consistency == optlock && cls == classShared
	if guarded {
		if err := c.Read(c.w1[:], ref.addr); err != nil {
			return false, err
		}
		// A held lock is re-read alone, 8 bytes, with no pause: what DEX's
		// page_search and Sherman's page_search do before any re-read.
		if lockWord(c.w1[:])&tagMask != 0 {
			return false, nil
		}
	}
	if err := c.Read(buf, addr); err != nil {
		return false, err
	}
	if guarded {
		if err := c.Read(c.w2[:], ref.addr); err != nil {
			return false, err
		}
	}
	return c.valid(buf, cls, c.w1[:], c.w2[:], false), nil
}

// valid judges an image read for class cls: w1 and w2 are the lock words
// read around it in optlock (ignored otherwise); entries asks for the
// entry-level versions of a leaf to be checked too where the variant
// needs them (a search checks only the entry it looks for).
func (c *client) valid(img []byte, cls class, w1, w2 []byte, entries bool) bool {
	x := c.x
	if cls == classOwned {
		return true
	}
	if x.consistency == optlock && cls == classShared {
		if !x.lockWordsAccept(lockWord(w1), lockWord(w2)) {
			return false
		}
		if x.parts == nil && !x.dexCheck {
			return true
		}
	}
	if !c.layoutConsistent(img) {
		return false
	}
	return !entries || !c.checkEntries(cls) || c.entriesConsistent(img)
}

// lockWordsAccept is optlock's test of the lock words w1 and w2 read
// before and after a node. The first must be free (readOnce does not READ
// the node otherwise). By default the second must equal it: no writer
// held the lock at any time in between, so the node was not being
// written. With optcheck=dex it is the test of DEX's Sherman (src/Tree.cpp,
// page_search under LOCK_VERSION): read again only if the version moved
// and the lock is held again. That accepts a node a writer locked, or
// locked and released, during the READ, which valid then checks by the
// node and entry versions as the versions variant does.
func (x *Index) lockWordsAccept(w1, w2 uint64) bool {
	switch {
	case w1&tagMask != 0:
		return false
	case x.dexCheck:
		return w1>>tagBits == w2>>tagBits || w2&tagMask == 0
	}
	return w1 == w2
}

// entriesConsistent checks every entry of a leaf image.
func (c *client) entriesConsistent(img []byte) bool {
	l := &c.x.l
	for i := range l.leafCard {
		if !entryConsistent(l.entry(img, i)) {
			return false
		}
	}
	return true
}

// layoutConsistent is the check a node carries in its own bytes: the CRC
// in the crc variant, else the front and rear node versions.
func (c *client) layoutConsistent(buf []byte) bool {
	if c.x.consistency == crc {
		c.ChargeStep(cost.Checksum(len(buf) - 8))
		return crcMatches(buf)
	}
	return inner.VersionsMatch(buf)
}

// checkEntries reports whether a leaf read for class cls must also pass
// the entry-level version check: in the versions variant always, and in
// the optlock one with DEX's lock-word test (whose leaf_page_search skips
// an entry with unequal versions) and for nodes whose writers a
// P-Sherman reader cannot see.
func (c *client) checkEntries(cls class) bool {
	x := c.x
	return x.consistency == versions || x.consistency == optlock && (x.dexCheck || x.parts != nil) && cls != classOwned
}

// waitLocal waits for the writer of this compute node that is writing a
// node behind slot to finish.
func (c *client) waitLocal(slot *localLock) {
	c.Flush()
	slot.mu.Lock(c.EP)
	slot.mu.Unlock()
}

// findInLeaf looks key up in a leaf image by a linear scan of its
// unsorted entries, as Sherman's leaf_page_search does. torn reports an
// entry for key whose versions disagree: the READ caught a WRITE of it
// half done, so the leaf must be read again (returning "not found" then is
// Sherman issue #27).
func (c *client) findInLeaf(img, key []byte, check bool) (val []byte, found, torn bool) {
	l := &c.x.l
	// Entries are told apart by their keys' last words first, in line:
	// those differ between hashed keys and between dense ones alike, and
	// a call to compare every key of the leaf cost more than the scan.
	fast := len(key) == l.KeySize && len(key) >= 8
	var last uint64
	if fast {
		last = binary.LittleEndian.Uint64(key[len(key)-8:])
	}
	i := 0
	for ; i < l.leafCard && !found && !torn; i++ {
		e := l.entry(img, i)
		k := l.entryKey(e)
		if fast && binary.LittleEndian.Uint64(k[len(k)-8:]) != last || !bytes.Equal(k, key) {
			continue
		}
		switch {
		case check && !entryConsistent(e):
			torn = true
		case entryValid(e):
			val, found = l.entryVal(e), true
		}
	}
	c.Charge(cost.LinearScan(i))
	return val, found, torn
}
