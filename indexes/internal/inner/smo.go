package inner

import (
	"bytes"
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// Structure modifications above the leaves, as Sherman's code makes them:
// a node that fills up is split while it is locked: the new right sibling
// is written first, then the shrunk node with its unlock; only then is
// the separator inserted into the parent, under the parent's own lock, so
// a writer never holds two locks. Readers that reach the old node with a
// key that moved follow its sibling pointer meanwhile (B-link style).

// AddSeparator finishes a split of the node left of level lvl-1, whose
// upper part, from key sep on, moved to its new right sibling right: it
// installs a new root of level lvl over both when left was the root,
// else inserts (sep, right) into the node of level lvl that covers sep.
func (c *Client[H]) AddSeparator(left transport.GAddr, sep []byte, right transport.GAddr, lvl int, leftWasRoot bool) error {
	if leftWasRoot {
		return c.growRoot(left, sep, right, lvl)
	}
	return c.insertSeparator(sep, right, lvl)
}

// insertSeparator inserts (sep, child) into the node of level lvl that
// covers sep: the one this operation passed on its way down if it did,
// else the one a new traversal finds (Sherman's insert_internal).
func (c *Client[H]) insertSeparator(sep []byte, child transport.GAddr, lvl int) error {
	l := c.t.l
	if lvl >= MaxLevels {
		return errTall
	}
	loc := Location{Addr: c.path[lvl].addr, Rng: c.path[lvl].rng}
	for range MaxRetries {
		if loc.Addr == 0 {
			var err error
			if loc, err = c.locate(sep, lvl, true); err != nil {
				return err
			}
		}
		img := c.Buf[:l.InnerBytes]
		locked := loc.Addr
		h, err := c.p.LockInner(locked, loc.Rng, img)
		if err != nil {
			return err
		}
		switch {
		case Level(img) != lvl || bytes.Compare(sep, l.Low(img)) < 0:
			c.dropParent(&loc)
			loc = Location{}
		case !l.Covers(img, sep):
			loc = Location{Addr: Sibling(img), Rng: KeyRange{Lo: bytes.Clone(l.High(img))}}
		default:
			if loc.IsRoot && !l.CoversAll(img) {
				c.ForgetRoot()
			}
			return c.addToInner(h, locked, img, sep, child)
		}
		if err := c.p.Unlock(h, locked, nil); err != nil {
			return err
		}
	}
	return fmt.Errorf("no stable level-%d node for separator %x after %d tries", lvl, sep, MaxRetries)
}

// addToInner inserts (sep, child) into the locked internal node img at
// addr and writes it back whole, as Sherman's internal_page_store does,
// splitting it when it fills.
func (c *Client[H]) addToInner(h H, addr transport.GAddr, img, sep []byte, child transport.GAddr) error {
	l := c.t.l
	c.Charge(cost.NodeSearch(Count(img) + 1))
	l.insertInner(img, sep, child)
	if Count(img) < l.InnerCard {
		c.p.Seal(img)
		if err := c.p.Unlock(h, addr, img); err != nil {
			return err
		}
		c.cacheInsert(addr, img)
		return nil
	}
	sibAddr, err := c.AllocNode(l.InnerBytes)
	if err != nil {
		return JoinUnlock(err, c.p.Unlock(h, addr, nil))
	}
	wasRoot := l.CoversAll(img)
	sib, old := c.Sib[:l.InnerBytes], c.Aux[:l.InnerBytes]
	up := l.splitInner(img, old, sib, sibAddr)
	c.p.Seal(sib)
	c.p.Seal(old)
	c.Charge(cost.Copy(len(img)))
	if err := c.Write(sibAddr, sib); err != nil {
		return JoinUnlock(fmt.Errorf("writing new node %v: %w", sibAddr, err), c.p.Unlock(h, addr, nil))
	}
	if err := c.p.Unlock(h, addr, old); err != nil {
		return err
	}
	c.cacheInsert(sibAddr, sib)
	c.cacheInsert(addr, old)
	return c.AddSeparator(addr, up, sibAddr, Level(old)+1, wasRoot)
}

// growRoot installs a new root of level lvl over the old root left and
// its new sibling right: WRITE the root, then CAS the root pointer. If the
// CAS fails another root is already there, and the separator goes into it
// like any other.
func (c *Client[H]) growRoot(left transport.GAddr, sep []byte, right transport.GAddr, lvl int) error {
	l := c.t.l
	if lvl >= MaxLevels {
		return errTall
	}
	a, err := c.AllocNode(l.InnerBytes)
	if err != nil {
		return err
	}
	img := c.Sib[:l.InnerBytes]
	l.InitNode(img, lvl, make([]byte, l.KeySize), nil, 0)
	l.setInnerChild(img, 0, left)
	l.insertInner(img, sep, right)
	c.p.Seal(img)
	if err := c.Write(a, img); err != nil {
		return fmt.Errorf("writing new root %v: %w", a, err)
	}
	old, err := c.CAS(c.t.RootPtr, RootWord(left, lvl-1), RootWord(a, lvl))
	if err != nil {
		return fmt.Errorf("installing new root %v: %w", a, err)
	}
	if old == RootWord(left, lvl-1) {
		c.setRoot(a, lvl)
		c.cacheInsert(a, img)
		return nil
	}
	c.ForgetRoot()
	c.path[lvl] = pathStep{}
	return c.insertSeparator(sep, right, lvl)
}
