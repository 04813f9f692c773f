package rftree

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

// readNode READs the node at a into img until its checksum matches
// (section 3.3.3, "Read in the Data Node"): a mismatch is a READ that
// overlapped a write of the node, and it is read again. Data nodes are
// always read this way; internal nodes only by writers, who need the
// exact image they lock.
func (c *client) readNode(img []byte, a transport.GAddr) error {
	l := &c.x.l
	for range maxRetries {
		if err := c.read(img, a); err != nil {
			return fmt.Errorf("reading node %v: %w", a, err)
		}
		c.chargeCRC(cost.Checksum(l.checksumBytes()))
		if l.crcMatches(img) {
			return nil
		}
		c.ep.Backoff(0) // let the writer run on real fabrics; free on sim
	}
	return fmt.Errorf("node %v still fails its checksum after %d reads", a, maxRetries)
}

// locate finds the data node covering key and leaves its image in img:
// the SLC's route (refreshing an empty SLC first), then the data node's
// READ, then its sibling pointers while the node's high fence is at or
// below key (the SLC is stale: the node split since) or the node is
// deleted (merged into its left neighbour, whose address it keeps). A
// node whose low fence is above key means a wrong route: the SLC is
// refreshed and the route taken again. More than refresh_hops sibling
// pointers, or internal nodes missing from the SLC, schedule a refresh
// for the end of the operation.
func (c *client) locate(key, img []byte) (transport.GAddr, error) {
	cn := c.cn
	for range maxRetries {
		s := cn.slc.Load()
		if s == nil {
			if err := c.refresh(nil, true); err != nil {
				return 0, err
			}
			continue
		}
		r, err := c.route(s, key)
		if err == nil {
			r.leaf, err = c.walkRight(key, img, r.leaf, &r.hops)
		}
		if errors.Is(err, errWrongNode) {
			if err := c.refresh(s, true); err != nil {
				return 0, err
			}
			continue
		}
		if err != nil {
			return 0, err
		}
		cn.lookups.Add(1)
		if r.hops == 0 && !r.fetched {
			cn.hits.Add(1)
		}
		if r.hops > c.x.refreshHop || r.fetched {
			c.stale = s
		}
		return r.leaf, nil
	}
	return 0, fmt.Errorf("no route to a data node after %d tries", maxRetries)
}

// walkRight READs data node a and follows sibling pointers from it until
// the node in img covers key, counting the hops.
func (c *client) walkRight(key, img []byte, a transport.GAddr, hops *int) (transport.GAddr, error) {
	l := &c.x.l
	for range maxRetries {
		if a == 0 {
			return 0, errWrongNode
		}
		if err := c.readNode(img, a); err != nil {
			return 0, err
		}
		switch {
		case level(img) != 0:
			return 0, errWrongNode
		case deleted(img):
			a = sibling(img) // merged into its left neighbour
		case compare(key, l.low(img)) < 0:
			return 0, errWrongNode
		case l.covers(img, key):
			return a, nil
		default:
			a = sibling(img)
		}
		*hops++
	}
	return 0, fmt.Errorf("no data node covers %x after %d hops", key, maxRetries)
}

// Get reads the data node covering key: one READ with a warm SLC.
func (c *client) Get(key []byte) ([]byte, bool, error) {
	l := &c.x.l
	img := c.buf
	if _, err := c.locate(key, img); err != nil {
		return nil, false, err
	}
	i, found := l.leafFind(img, key)
	c.charge(cost.NodeSearch(count(img)))
	if !found {
		return nil, false, nil
	}
	return bytes.Clone(l.leafVal(img, i)), true, nil
}

// Put inserts, updates or deletes key (section 3.3.4): READ the data
// node and check its checksum, CAS its lock word from the unlocked
// version READ to locked (so the CAS fails if any writer got in since
// the READ), change the image, and WRITE the whole node back with the
// version incremented and the lock free. An update or delete of an absent
// key takes no lock: the READ shows it absent.
func (c *client) Put(key, val []byte, kind indexes.WriteKind) error {
	l := &c.x.l
	img := c.buf
	a, err := c.locate(key, img)
	if err != nil {
		return err
	}
	for range maxRetries {
		w := l.lockWord(img)
		if lockHolder(w) == 0 {
			i, found := l.leafFind(img, key)
			c.charge(cost.NodeSearch(count(img)))
			if !found && kind != indexes.WriteInsert {
				return indexes.ErrNotFound
			}
			old, err := c.cas(a.Add(l.lockOffset()), w, lockWordOf(lockVersion(w), c.tag))
			if err != nil {
				return fmt.Errorf("locking data node %v: %w", a, err)
			}
			if old == w {
				return c.modify(a, img, i, found, key, val, kind)
			}
			w = old
		}
		// Locked, or written since the READ: wait for the holder by
		// READing the lock word alone, then read the node again, moving
		// right if it split meanwhile.
		if err := c.awaitUnlock(a, w); err != nil {
			return err
		}
		hops := 0
		a, err = c.walkRight(key, img, a, &hops)
		if errors.Is(err, errWrongNode) {
			a, err = c.locate(key, img)
		}
		if err != nil {
			return err
		}
	}
	return fmt.Errorf("data node of %x still locked after %d tries", key, maxRetries)
}

// modify applies the operation to the locked data node img at a, entry
// position i (found: key is there), and writes the node back.
func (c *client) modify(a transport.GAddr, img []byte, i int, found bool, key, val []byte, kind indexes.WriteKind) error {
	l := &c.x.l
	switch {
	case kind == indexes.WriteDelete:
		l.leafRemoveAt(img, i)
		c.charge(cost.Copy((count(img) - i) * l.leafEntry))
		if count(img) < c.x.mergeBelow && sibling(img) != 0 {
			return c.merge(a, img)
		}
	case found:
		copy(l.leafVal(img, i), val)
	case count(img) < l.leafCard:
		l.leafInsertAt(img, i, key, val)
		c.charge(cost.Copy((count(img) - i) * l.leafEntry))
	default:
		return c.splitData(a, img, i, key, val)
	}
	return c.writeBack(a, img)
}

// writeBack writes the locked node img back to a whole, unlocked, its
// version incremented and its checksum renewed: the lock word is the
// node's last 8 bytes, so in paper memory mode it lands last.
func (c *client) writeBack(a transport.GAddr, img []byte) error {
	l := &c.x.l
	l.setLockWord(img, lockWordOf(lockVersion(l.lockWord(img))+1, 0))
	c.seal(img)
	if err := c.write(a, img); err != nil {
		return fmt.Errorf("writing node %v: %w", a, err)
	}
	return nil
}

// unlock frees a node locked with word w without changing it: a WRITE of
// the lock word as it was (the checksum does not cover the holder).
func (c *client) unlock(a transport.GAddr, w uint64) error {
	l := &c.x.l
	var b [8]byte
	putWord(b[:], lockWordOf(lockVersion(w), 0))
	if err := c.write(a.Add(l.lockOffset()), b[:]); err != nil {
		return fmt.Errorf("unlocking node %v: %w", a, err)
	}
	return nil
}

func (c *client) seal(img []byte) {
	c.chargeCRC(cost.Checksum(c.x.l.checksumBytes()))
	c.x.l.seal(img)
}

// lock CASes the lock word of node a from w, as READ with the node, to
// held by this thread; false if w is held or the word has moved on.
func (c *client) lock(a transport.GAddr, w uint64) (bool, error) {
	if lockHolder(w) != 0 {
		return false, nil
	}
	old, err := c.cas(a.Add(c.x.l.lockOffset()), w, lockWordOf(lockVersion(w), c.tag))
	if err != nil {
		return false, fmt.Errorf("locking node %v: %w", a, err)
	}
	return old == w, nil
}

// awaitUnlock spins on the lock word of node a, last seen as w, with
// 8-byte READs until no one holds it: a writer that finds a node locked
// waits without moving the node or checksumming it again and again.
func (c *client) awaitUnlock(a transport.GAddr, w uint64) error {
	for range maxRetries {
		if lockHolder(w) == 0 {
			return nil
		}
		if err := c.read(c.word[:], a.Add(c.x.l.lockOffset())); err != nil {
			return fmt.Errorf("reading the lock word of node %v: %w", a, err)
		}
		w = getWord(c.word[:])
		c.ep.Backoff(0) // let the holder run on real fabrics; free on sim
	}
	return fmt.Errorf("node %v still locked after %d reads", a, maxRetries)
}
