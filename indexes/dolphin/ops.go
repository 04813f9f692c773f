package dolphin

import (
	"encoding/binary"
	"fmt"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/combine"
	"github.com/dmbench/dmbench/transport"
)

func (c *client) checkKey(key []byte) error {
	if len(key) != c.l.keySize {
		return fmt.Errorf("dolphin: key of %d bytes, index built for %d", len(key), c.l.keySize)
	}
	return nil
}

// Search reads the key's leaf: one READ on a warm cache.
func (c *client) Search(key []byte) ([]byte, bool, error) {
	defer c.flush()
	if err := c.checkKey(key); err != nil {
		return nil, false, err
	}
	return c.comb.Search(key, func() ([]byte, bool, error) { return c.search(key) })
}

func (c *client) search(key []byte) ([]byte, bool, error) {
	for range maxRetries {
		f, err := c.find(key, false)
		if err != nil || f.leaf == 0 || f.other {
			return nil, false, err
		}
		at, st, _ := c.slotOf(f.img, key[c.l.keySize-1])
		if at < 0 || st != stateLive {
			return nil, false, nil
		}
		if v, ok := c.l.valueAt(f.img, at); ok {
			return v, true, nil
		}
	}
	return nil, false, fmt.Errorf("dolphin: search of %x kept reading a torn value", key)
}

// Update overwrites the value in place: FAA +1 with the READ of the
// leaf's keys, then WRITE of the value with FAA -1 (2 round trips). Two
// updates of one key race only in the memory node's RNIC, which applies
// their WRITEs whole (MS-RNIC write synchronisation, section III.C).
func (c *client) Update(key, val []byte) error {
	defer c.flush()
	if err := c.checkKey(key); err != nil {
		return err
	}
	return c.comb.Write(combine.Update, key, val, func() error { return c.update(key, val) })
}

func (c *client) update(key, val []byte) error {
	c.wval = val
	f, at, err := c.locked(key)
	if err != nil {
		return err
	}
	buf := c.l.encodeValue(make([]byte, 0, c.l.valStride), c.wval, c.l.valueVersion(f.img, at)+1)
	return c.post(transport.WriteOp(c.l.valueAddr(f.leaf, at), buf), transport.FAAOp(c.l.lockAddr(f.leaf), ^uint64(0)))
}

// Delete turns the key's word into a tombstone by CAS, posted with the
// release of Spear (2 round trips with the locked READ); the slot is
// reclaimed by the leaf's next SMO. The paper clears the key with a WRITE;
// a CAS makes one of two racing deletes fail, as linearizability needs.
func (c *client) Delete(key []byte) error {
	defer c.flush()
	if err := c.checkKey(key); err != nil {
		return err
	}
	b := key[c.l.keySize-1]
	f, at, err := c.locked(key)
	if err != nil {
		return err
	}
	ops := []transport.Op{
		transport.CASOp(c.l.keyAddr(f.leaf, at), keyWord(stateLive, b), keyWord(stateDeleted, b)),
		transport.FAAOp(c.l.lockAddr(f.leaf), ^uint64(0)),
	}
	if err := c.post(ops...); err != nil {
		return err
	}
	if ops[0].Old != keyWord(stateLive, b) {
		return indexes.ErrNotFound
	}
	return nil
}

// locked finds key live in its leaf under Spear, or releases Spear and
// returns ErrNotFound.
func (c *client) locked(key []byte) (found, int, error) {
	f, err := c.find(key, true)
	if err != nil {
		return f, 0, err
	}
	if f.leaf == 0 || f.other {
		return f, 0, indexes.ErrNotFound
	}
	at, st, _ := c.slotOf(f.img, key[c.l.keySize-1])
	if at < 0 || st != stateLive {
		if err := c.release(f.leaf); err != nil {
			return f, 0, err
		}
		return f, 0, indexes.ErrNotFound
	}
	return f, at, nil
}

// Insert adds key or replaces its value. In a leaf of its prefix: FAA +1
// with the READ of the keys, CAS of the first empty key word to pending,
// then WRITE of the value, WRITE of the key word live and FAA -1 in one
// batch (3 round trips). A key with a new prefix gets a leaf of its own
// (section III.B, Figure 4(b)).
func (c *client) Insert(key, val []byte) error {
	defer c.flush()
	if err := c.checkKey(key); err != nil {
		return err
	}
	return c.comb.Write(combine.Insert, key, val, func() error { return c.insert(key, val) })
}

func (c *client) insert(key, val []byte) error {
	c.wval = val
	b := key[c.l.keySize-1]
	for range maxRetries {
		f, err := c.find(key, true)
		if err != nil {
			return err
		}
		if f.leaf == 0 || f.other {
			done, err := c.insertLeaf(key, val, f)
			if err != nil || done {
				return err
			}
			continue
		}
		at, st, empty := c.slotOf(f.img, b)
		switch {
		case at >= 0 && st == stateLive:
			buf := c.l.encodeValue(make([]byte, 0, c.l.valStride), c.wval, c.l.valueVersion(f.img, at)+1)
			return c.post(transport.WriteOp(c.l.valueAddr(f.leaf, at), buf), transport.FAAOp(c.l.lockAddr(f.leaf), ^uint64(0)))
		case at >= 0:
			// Another insert of the key is between its CAS and its WRITE.
			if err := c.release(f.leaf); err != nil {
				return err
			}
			continue
		}
		done, err := c.claim(f, key, val, empty)
		if err != nil || done {
			return err
		}
	}
	return fmt.Errorf("dolphin: insert of %x did not settle", key)
}

// claim CASes empty key words from slot from on until one is ours, then
// writes the value and makes the key live. It reports false when the
// insert must start again (the key appeared meanwhile, or the leaf is
// full and has had its SMO); either way it has released Spear.
func (c *client) claim(f found, key, val []byte, from int) (bool, error) {
	b := key[c.l.keySize-1]
	pending := keyWord(statePending, b)
	for j := from; j >= 0 && j < c.l.span; j++ {
		op := transport.CASOp(c.l.keyAddr(f.leaf, j), 0, pending)
		if err := c.postOne(&op); err != nil {
			return false, fmt.Errorf("claiming a key slot: %w", err)
		}
		if op.Old == 0 {
			ver := byte(0)
			if c.l.valLines > 0 {
				ver = c.l.valueVersion(f.img, j) + 1
			}
			buf := c.l.encodeValue(make([]byte, 0, c.l.valStride), c.comb.CutWrite(c.wval), ver)
			live := make([]byte, 8)
			putUint64(live, keyWord(stateLive, b))
			return true, c.post(
				transport.WriteOp(c.l.valueAddr(f.leaf, j), buf),
				transport.WriteOp(c.l.keyAddr(f.leaf, j), live),
				transport.FAAOp(c.l.lockAddr(f.leaf), ^uint64(0)))
		}
		if st := wordState(op.Old); wordByte(op.Old) == b && (st == stateLive || st == statePending) {
			return false, c.release(f.leaf)
		}
	}
	if err := c.release(f.leaf); err != nil {
		return false, err
	}
	return false, c.smo(f, key)
}

func putUint64(b []byte, v uint64) { binary.LittleEndian.PutUint64(b, v) }
