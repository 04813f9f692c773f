package inner

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// ErrStale restarts an operation from the root: a node it reached was not
// where its cached or believed parent said, or (Marlin) another structure
// modification rebuilt the leaf under it.
var ErrStale = errors.New("stale path")

// Location is a node a traversal arrived at: its address, the key range
// its parent gave it (a superset of its range now: nodes only shrink),
// and the cached parent it came from, which is stale if the node turns
// out not to cover the key.
type Location struct {
	Addr   transport.GAddr
	Rng    KeyRange
	Parent *CachedNode
	IsRoot bool // the node is the root this compute node knows
}

// root returns what this compute node believes the root is, reading the
// root pointer when it does not know.
func (c *Client[H]) root() (rootInfo, error) {
	p := c.t.rootOf(c.EP.Node())
	if r := p.Load(); r != nil {
		return *r, nil
	}
	var w [8]byte
	if err := c.Read(w[:], c.t.RootPtr); err != nil {
		return rootInfo{}, fmt.Errorf("reading the root pointer: %w", err)
	}
	a, lvl := DecodeRoot(binary.LittleEndian.Uint64(w[:]))
	r := rootInfo{Addr: a, Level: lvl}
	p.Store(&r)
	return r, nil
}

// ForgetRoot makes the next traversal read the root pointer again: the
// node believed to be the root no longer spans the key space, so the
// tree has grown (Sherman broadcasts new roots by RPC instead).
func (c *Client[H]) ForgetRoot() { c.t.rootOf(c.EP.Node()).Store(nil) }

// setRoot records a root this client installed.
func (c *Client[H]) setRoot(a transport.GAddr, lvl int) {
	c.t.rootOf(c.EP.Node()).Store(&rootInfo{Addr: a, Level: lvl})
}

// dropParent drops the cached parent loc came from, if any.
func (c *Client[H]) dropParent(loc *Location) { c.DropCached(loc.Parent) }

// locate finds the node of level target that covers key. With fast set it
// first asks the index cache for the covering node one level up (for a
// leaf: Sherman's single cache lookup of a level-1 node); otherwise, or
// on a miss, it walks down from the root through cached copies where it
// has them and READs of the nodes it lacks, which it caches. It records
// the internal nodes it passes in the path for splits to come.
func (c *Client[H]) locate(key []byte, target int, fast bool) (Location, error) {
	nc := c.cache()
	for range MaxRetries {
		if fast {
			n := c.lookupCached(target+1, key)
			if target == 0 {
				nc.lookups.Add(1)
				if n != nil {
					nc.hits.Add(1)
				}
			}
			if n != nil {
				return c.descend(n.Addr, n.Image, n, key), nil
			}
		}
		loc, err := c.walk(key, target)
		if !errors.Is(err, ErrStale) {
			return loc, err
		}
	}
	return Location{}, fmt.Errorf("no stable path to level %d after %d restarts", target, MaxRetries)
}

// descend picks the child of internal node img (at addr) covering key:
// from the node's routing fields when img is the cached node from's
// image, whose fences and ranges it records then alias; an image just
// read into the client's reused buffer (from nil) is searched itself and
// the fences copied out of it.
func (c *Client[H]) descend(addr transport.GAddr, img []byte, from *CachedNode, key []byte) Location {
	l := c.t.l
	if from != nil {
		c.setPath(from.level, pathStep{addr: addr, rng: KeyRange{Lo: l.Low(img), Hi: from.highOrNil(l), Known: true}})
		i := from.childIndex(l, key)
		c.Charge(cost.NodeSearch(len(from.seps) + 1))
		return Location{Addr: transport.GAddr(from.kids[i]), Rng: from.childRange(l, i), Parent: from}
	}
	c.setPath(Level(img), pathStep{addr: addr, rng: KeyRange{Lo: bytes.Clone(l.Low(img)), Hi: bytes.Clone(l.HighOrNil(img)), Known: true}})
	i := l.childIndex(img, key)
	c.Charge(cost.NodeSearch(Count(img) + 1))
	r := l.childRange(img, i)
	r.Lo, r.Hi = bytes.Clone(r.Lo), bytes.Clone(r.Hi)
	return Location{Addr: l.InnerChild(img, i), Rng: r}
}

// setPath records step as the operation's internal node of level lvl.
func (c *Client[H]) setPath(lvl int, step pathStep) {
	c.path[lvl] = step
	c.pathLen = max(c.pathLen, lvl+1)
}

// route is the child of internal node img covering key, found through
// from's separator words when img is from's cached image, which covers
// key.
func route(l *Layout, img []byte, from *CachedNode, key []byte) int {
	if from != nil {
		return from.childIndex(l, key)
	}
	return l.childIndex(img, key)
}

// walk is one traversal from the root down to level target.
func (c *Client[H]) walk(key []byte, target int) (Location, error) {
	l := c.t.l
	root, err := c.root()
	if err != nil {
		return Location{}, err
	}
	if root.Level < target {
		// The root this node knows is below the level wanted: a new root
		// is being installed by the client that split the old one.
		c.ForgetRoot()
		return Location{}, ErrStale
	}
	loc := Location{Addr: root.Addr, Rng: l.fullRange(), IsRoot: root.Level == target}
	top := true
	for lvl := root.Level; lvl > target; {
		img, cached := []byte(nil), c.lookupCached(lvl, key)
		if cached != nil {
			img = cached.Image
		} else {
			img = c.Aux[:l.InnerBytes]
			if err := c.p.ReadNode(img, loc.Addr, loc.Rng); err != nil {
				return Location{}, err
			}
			if Level(img) != lvl || bytes.Compare(key, l.Low(img)) < 0 {
				c.ForgetRoot()
				return Location{}, ErrStale
			}
			if !l.Covers(img, key) {
				// The node split after its parent (or the root pointer)
				// was read: follow its sibling, and drop the stale parent.
				c.dropParent(&loc)
				if top {
					c.ForgetRoot()
				}
				loc = Location{Addr: Sibling(img), Rng: KeyRange{Lo: bytes.Clone(l.High(img))}}
				top = false
				continue
			}
			c.cacheInsert(loc.Addr, img)
		}
		if top && !l.CoversAll(img) {
			c.ForgetRoot()
		}
		top = false
		addr := loc.Addr
		if cached != nil {
			addr = cached.Addr
		}
		loc = c.descend(addr, img, cached, key)
		lvl--
	}
	return loc, nil
}

// AtLeaf runs visit on the leaf covering key, which it finds through the
// index cache first and, after visit reports ErrStale, by walks from the
// root. visit is given the leaf's location and the number of times it ran
// there before, and says whether to run again: after Arrive moved the
// location on to a sibling, or to read a torn leaf again.
func (c *Client[H]) AtLeaf(key []byte, visit func(loc *Location, hops int) (again bool, err error)) error {
	fast := true
	loc := &c.leaf
	for range MaxRetries {
		var err error
		if *loc, err = c.locate(key, 0, fast); err != nil {
			return err
		}
		for hops := 0; hops < MaxRetries; hops++ {
			again, err := visit(loc, hops)
			if errors.Is(err, ErrStale) {
				break
			}
			if err != nil || !again {
				return err
			}
		}
		fast = false
	}
	return fmt.Errorf("no stable leaf after %d restarts", MaxRetries)
}

// Arrive checks that the leaf image img read at loc covers key. When it
// does not, the leaf split after its parent was read: coming from a
// cached parent, the parent is dropped and the operation restarts from
// the root to refresh it (ErrStale), as Sherman does; coming from a
// fresh parent or a sibling, loc moves to the right sibling (next).
func (c *Client[H]) Arrive(loc *Location, img, key []byte, hops int) (next bool, err error) {
	l := c.t.l
	if Level(img) != 0 || bytes.Compare(key, l.Low(img)) < 0 {
		c.dropParent(loc)
		c.ForgetRoot()
		return false, ErrStale
	}
	if loc.IsRoot && !l.CoversAll(img) {
		c.ForgetRoot()
	}
	if l.Covers(img, key) {
		return false, nil
	}
	if loc.Parent != nil && hops == 0 {
		c.dropParent(loc)
		return false, ErrStale
	}
	*loc = Location{Addr: Sibling(img), Rng: KeyRange{Lo: bytes.Clone(l.High(img))}}
	return true, nil
}

// KParaFetch bounds the leaves a scan READs in one batch, as Sherman's
// and Marlin's range_query keep at most 32 READs in flight.
const KParaFetch = 32

// Leaves lists up to want leaves, at most KParaFetch, from the one
// covering key on, for a scan to READ in one doorbell batch, as Sherman's
// range_query takes them: the children of the level-1 node covering key
// (parent is its cached copy, nil if it was read), or in a tree of one
// leaf that leaf (rootLeaf). The ranges of the leaves alias the level-1
// image, which the client's next traversal may overwrite.
func (c *Client[H]) Leaves(key []byte, want int) (leaves []Location, parent *CachedNode, rootLeaf bool, err error) {
	want = min(want, KParaFetch)
	l := c.t.l
	root, err := c.root()
	if err != nil {
		return nil, nil, false, err
	}
	if root.Level == 0 {
		return []Location{{Addr: root.Addr, Rng: l.fullRange()}}, nil, true, nil
	}
	img, parent, err := c.levelOne(key)
	if err != nil {
		return nil, nil, false, err
	}
	for i := route(l, img, parent, key); i <= Count(img) && len(leaves) < want; i++ {
		leaves = append(leaves, Location{Addr: l.InnerChild(img, i), Rng: l.childRange(img, i), Parent: parent})
	}
	c.Charge(cost.NodeSearch(Count(img) + 1))
	return leaves, parent, false, nil
}

// levelOne returns an image of the level-1 node covering key: the cached
// copy, or a fresh READ that it caches.
func (c *Client[H]) levelOne(key []byte) ([]byte, *CachedNode, error) {
	l := c.t.l
	nc := c.cache()
	n := c.lookupCached(1, key)
	nc.lookups.Add(1)
	if n != nil {
		nc.hits.Add(1)
		return n.Image, n, nil
	}
	for range MaxRetries {
		loc, err := c.locate(key, 1, false)
		if err != nil {
			return nil, nil, err
		}
		img := c.Aux[:l.InnerBytes]
		if err := c.p.ReadNode(img, loc.Addr, loc.Rng); err != nil {
			return nil, nil, err
		}
		if Level(img) == 1 && l.Covers(img, key) {
			c.cacheInsert(loc.Addr, img)
			return img, nil, nil
		}
		c.dropParent(&loc)
		c.ForgetRoot()
	}
	return nil, nil, fmt.Errorf("no stable level-1 node after %d tries", MaxRetries)
}
