package dolphin

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes/combine"
	"github.com/dmbench/dmbench/transport"
)

// maxRetries bounds every retry loop (a leaf under an SMO, stale caches,
// lost CASes). Each retry issues a verb, so time moves on; the bound only
// turns a livelock into an error.
const maxRetries = 1 << 20

// client runs operations for one coroutine.
type client struct {
	x     *Index
	l     *layout
	ep    transport.Endpoint
	cache *artCache
	alloc *transport.Allocator
	cpu   int64 // local work charged but not yet handed to Compute

	comb combine.Client // the node's local lock table (combine.go)
	wval []byte         // the value the current insert or update writes
}

func leUint64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

func (c *client) charge(ns int64) { c.cpu += ns }

func (c *client) flush() {
	if c.cpu > 0 {
		c.ep.Compute(c.cpu)
		c.cpu = 0
	}
}

func (c *client) post(ops ...transport.Op) error {
	c.flush()
	if len(ops) == 1 {
		o := &ops[0]
		var err error
		switch o.Kind {
		case transport.VerbRead:
			err = c.ep.Read(o.Buf, o.Addr)
		case transport.VerbWrite:
			err = c.ep.Write(o.Addr, o.Buf)
		case transport.VerbCAS:
			o.Old, err = c.ep.CAS(o.Addr, o.Expect, o.Swap)
		case transport.VerbFAA:
			o.Old, err = c.ep.FAA(o.Addr, o.Add)
		default:
			err = c.ep.Post(ops...)
		}
		return err
	}
	return c.ep.Post(ops...)
}

// postOne posts a single op, leaving an atomic's old value in op.Old.
func (c *client) postOne(op *transport.Op) error {
	ops := []transport.Op{*op}
	err := c.post(ops...)
	*op = ops[0]
	return err
}

func (c *client) read(dst []byte, a transport.GAddr) error {
	return c.post(transport.ReadOp(dst, a))
}

// release drops this client's Spear hold on a leaf.
func (c *client) release(leaf transport.GAddr) error {
	return c.post(transport.FAAOp(c.l.lockAddr(leaf), ^uint64(0)))
}

// fetch reads the internal node of type t at a and refreshes the cache.
func (c *client) fetch(a transport.GAddr, t nodeType) (*inode, error) {
	buf := make([]byte, c.l.innerBytes(t))
	if err := c.read(buf, a); err != nil {
		return nil, fmt.Errorf("reading internal node %v: %w", a, err)
	}
	n, err := c.l.decodeInner(a, buf)
	if err != nil {
		return nil, err
	}
	if n.typ() != t {
		return nil, fmt.Errorf("internal node %v: slot says type %d, header %d", a, t, n.typ())
	}
	c.cache.put(n, c.ep.Rand())
	return n, nil
}

// step is one internal node of a traversal: the copy used, whether it was
// read during this operation (fresh) rather than taken from the cache, and
// the slot followed (-1 when the traversal ended at the node).
type step struct {
	n     *inode
	fresh bool
	idx   int
}

// freshness says which nodes a traversal must read rather than take from
// the cache: all of them, or those at the listed addresses.
type freshness struct {
	all   bool
	addrs []transport.GAddr
}

func (f *freshness) must(a transport.GAddr) bool {
	if f.all {
		return true
	}
	for _, x := range f.addrs {
		if x == a {
			return true
		}
	}
	return false
}

// descent is where a traversal ended: at a leaf (leaf != 0; the last step
// holds its slot) or at a fresh internal node lacking the key (mismatch:
// index of the first partial-key byte that differs, or -1 when the node
// has no child for the key's byte).
type descent struct {
	path     []step
	leaf     transport.GAddr
	mismatch int
}

var errRestart = errors.New("dolphin: restart")

// descend walks the ART for key: the Hybrid-Index-friendly pathfinding of
// section III.B. Normal nodes match one key byte exactly; the special node
// at depth K-1 picks the leaf whose range holds the key's last byte. Cached
// copies are used where f allows; a cached node that lacks the key is read
// again before the traversal concludes anything from it, and an obsolete
// node (replaced by a grow or a prefix split) restarts the traversal with
// every node read fresh.
func (c *client) descend(key []byte, f freshness) (descent, error) {
	for range maxRetries {
		d, err := c.descendOnce(key, &f)
		if err == errRestart {
			f.all = true
			continue
		}
		return d, err
	}
	return descent{}, fmt.Errorf("dolphin: traversal for %x did not settle", key)
}

func (c *client) descendOnce(key []byte, f *freshness) (descent, error) {
	var path []step
	c.charge(cost.CacheLookup())
	n, fresh := c.cached(c.x.root, f)
	var err error
	if n == nil {
		if n, err = c.fetch(c.x.root, node256); err != nil {
			return descent{}, err
		}
		fresh = true
	}
	last := c.l.keySize - 1
	for range 4 * c.l.keySize {
		if fresh && n.obsolete() {
			return descent{}, errRestart
		}
		special := n.depth() == last
		c.charge(n.searchCost(special))
		mm := n.partialMatch(key)
		i := -1
		if mm < 0 {
			if special {
				i = n.rangeChild(key[last])
			} else {
				i = n.child(key[n.depth()])
			}
		}
		if i < 0 {
			if !fresh {
				if n, err = c.fetch(n.addr, n.typ()); err != nil {
					return descent{}, err
				}
				fresh = true
				continue
			}
			return descent{path: append(path, step{n, true, -1}), mismatch: mm}, nil
		}
		s := n.slots[i]
		if s.leaf() {
			return descent{path: append(path, step{n, fresh, i}), leaf: s.addr()}, nil
		}
		if special {
			return descent{}, fmt.Errorf("special node %v holds a non-leaf slot %#x", n.addr, uint64(s))
		}
		child, cfresh := c.cached(s.addr(), f)
		if child == nil {
			if child, err = c.fetch(s.addr(), s.typ()); err != nil {
				return descent{}, err
			}
			cfresh = true
		}
		if cfresh && child.obsolete() {
			if !fresh {
				if n, err = c.fetch(n.addr, n.typ()); err != nil {
					return descent{}, err
				}
				fresh = true
				continue
			}
			return descent{}, errRestart
		}
		path = append(path, step{n, fresh, i})
		n, fresh = child, cfresh
	}
	return descent{}, fmt.Errorf("dolphin: traversal for %x deeper than the key", key)
}

// cached returns the cache's copy of the node at a unless f demands a
// fresh one. A traversal is charged one cache lookup when it starts (as
// SMART's is) and a node search per node it passes.
func (c *client) cached(a transport.GAddr, f *freshness) (*inode, bool) {
	if f.must(a) {
		return nil, false
	}
	return c.cache.get(a), false
}

// found is the leaf an operation works on, as read.
type found struct {
	d      descent
	leaf   transport.GAddr
	img    leafImage
	held   bool // this client holds Spear +1 on the leaf
	other  bool // the leaf's prefix is not the key's (the key is absent)
	parent *step
}

// find locates and reads key's leaf. A writer (hold) adds 1 to the leaf's
// Spear word in the same doorbell batch as its READ; a reader READs the
// whole leaf and checks its versions. A leaf whose range has moved on
// (split after the cache was filled) sends the client back through the
// leaf's rev_ptr to its special parent (backtracking, section III.C).
func (c *client) find(key []byte, hold bool) (found, error) {
	var f freshness
	last := c.l.keySize - 1
	for range maxRetries {
		d, err := c.descend(key, f)
		if err != nil {
			return found{}, err
		}
		if d.leaf == 0 {
			return found{d: d}, nil
		}
		leaf := d.leaf
		parent := &d.path[len(d.path)-1]
		restart := false
		for !restart {
			img, held, busy, err := c.readLeaf(leaf, hold)
			if err != nil {
				return found{}, err
			}
			if busy {
				continue // an SMO holds the leaf: poll it
			}
			if !bytes.Equal(c.l.prefix(img), c.l.prefixOf(key)) {
				if held {
					if err := c.release(leaf); err != nil {
						return found{}, err
					}
				}
				if parent.fresh {
					ok, err := c.stillPoints(parent, leaf, hold)
					if err != nil {
						return found{}, err
					}
					if ok {
						return found{d: d, leaf: leaf, img: img, other: true, parent: parent}, nil
					}
				}
				f.addrs = append(f.addrs, parent.n.addr)
				restart = true
				continue
			}
			b := key[last]
			if c.l.lo(img) <= b && b <= c.l.hi(img) {
				return found{d: d, leaf: leaf, img: img, held: held, parent: parent}, nil
			}
			if held {
				if err := c.release(leaf); err != nil {
					return found{}, err
				}
			}
			rev := c.l.revPtr(img)
			if rev.kind() != kindInner {
				f.all, restart = true, true
				continue
			}
			sp, err := c.fetch(rev.addr(), rev.typ())
			if err != nil {
				return found{}, err
			}
			i := sp.rangeChild(b)
			if sp.obsolete() || sp.depth() != last || i < 0 {
				f.all, restart = true, true
				continue
			}
			c.charge(sp.searchCost(true))
			*parent = step{sp, true, i}
			leaf = sp.slots[i].addr()
		}
	}
	return found{}, fmt.Errorf("dolphin: locating the leaf of %x did not settle", key)
}

// readLeaf reads the leaf at a. A reader gets the whole leaf and busy when
// an SMO ran during the READ. A writer posts FAA +1 on Spear and a READ of
// the leaf's header and keys (the whole leaf when values carry cacheline
// versions) in one batch; busy when an SMO held Spear, whose +1 it undoes.
func (c *client) readLeaf(a transport.GAddr, hold bool) (img leafImage, held, busy bool, err error) {
	if !hold {
		c.comb.CutRead()
		img = make(leafImage, c.l.leafBytes)
		if err := c.read(img, a); err != nil {
			return nil, false, false, fmt.Errorf("reading leaf %v: %w", a, err)
		}
		return img, false, !c.l.consistent(img), nil
	}
	n := c.l.valsOff
	if c.l.valLines > 0 {
		n = c.l.leafBytes
	}
	img = make(leafImage, c.l.leafBytes)
	// This READ decides whether the key is live and in which slot: a
	// write round closes here and takes its value (see combine.go).
	c.wval = c.comb.CutWrite(c.wval)
	ops := []transport.Op{transport.FAAOp(c.l.lockAddr(a), 1), transport.ReadOp(img[:n], a)}
	if err := c.post(ops...); err != nil {
		return nil, false, false, fmt.Errorf("locking and reading leaf %v: %w", a, err)
	}
	if spearBusy(ops[0].Old) {
		// Undo the +1 and wait for the SMO by READs of the Spear word
		// alone, so that the SMO sees its writers drain.
		if err := c.release(a); err != nil {
			return nil, false, false, err
		}
		var w [8]byte
		for {
			if err := c.read(w[:], c.l.lockAddr(a)); err != nil {
				return nil, false, false, err
			}
			if !spearBusy(leUint64(w[:])) {
				return nil, false, true, nil
			}
		}
	}
	return img, true, false, nil
}

// slotOf returns the slot holding key byte b live or pending in a leaf
// image (-1 if none) and the first empty slot (-1 if none).
func (c *client) slotOf(img leafImage, b byte) (at, state, empty int) {
	at, empty = -1, -1
	c.charge(cost.LinearScan(c.l.span))
	for i := range c.l.span {
		w := c.l.keyWordAt(img, i)
		st := wordState(w)
		switch {
		case st == stateEmpty:
			if empty < 0 {
				empty = i
			}
		case (st == stateLive || st == statePending) && wordByte(w) == b:
			at, state = i, st
		}
		if empty >= 0 && st == stateEmpty && at >= 0 {
			break
		}
	}
	return at, state, empty
}

// findParent reads the ART afresh along key down to the node whose slot
// for key points at one of targets, returning it and the slot index.
func (c *client) findParent(key []byte, targets ...transport.GAddr) (*inode, int, error) {
	last := c.l.keySize - 1
	for range maxRetries >> 6 {
		n, err := c.fetch(c.x.root, node256)
		if err != nil {
			return nil, 0, err
		}
		for range 4 * c.l.keySize {
			if n.obsolete() || n.partialMatch(key) >= 0 {
				break
			}
			var i int
			if n.depth() == last {
				i = n.rangeChild(key[last])
			} else {
				i = n.child(key[n.depth()])
			}
			if i < 0 {
				break
			}
			s := n.slots[i]
			for _, t := range targets {
				if s.addr() == t {
					return n, i, nil
				}
			}
			if s.leaf() {
				break
			}
			if n, err = c.fetch(s.addr(), s.typ()); err != nil {
				return nil, 0, err
			}
		}
	}
	return nil, 0, fmt.Errorf("dolphin: no parent of %v found along %x", targets, key)
}

// stillPoints confirms, for a search that leads a read-delegation round,
// that the parent's slot still points to the leaf of another prefix and
// the parent has not been replaced: the answer "absent" rests on the
// parent, and the round must close before the READ that decides it.
// Outside a round the parent's READ in this operation decided it.
func (c *client) stillPoints(parent *step, leaf transport.GAddr, hold bool) (bool, error) {
	if !c.comb.Reading() || hold {
		return true, nil
	}
	c.comb.CutRead()
	var hdr, w [8]byte
	// The slot first: a header still current after it shows the slot was.
	if err := c.post(transport.ReadOp(w[:], c.l.slotAddr(parent.n, parent.idx)), transport.ReadOp(hdr[:], parent.n.addr)); err != nil {
		return false, err
	}
	s := slot(leUint64(w[:]))
	return !header(leUint64(hdr[:])).obsolete() && s.leaf() && s.addr() == leaf, nil
}
