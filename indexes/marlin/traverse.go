package marlin

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// errStale restarts an operation from the root: a node it reached was
// not where its cached or believed parent said.
var errStale = errors.New("stale path")

// location is a node a traversal arrived at: its address, the range its
// parent gave it, and the cached parent it came from (stale if the node
// turns out not to cover the key).
type location struct {
	addr   transport.GAddr
	parent *cachedNode
	isRoot bool // the node is the root this compute node knows
}

// The root pointer word holds the root's address with its level in the
// low bits, which node alignment leaves zero, so one CAS installs both.
const rootLevelMask = nodeAlign - 1

func rootWord(a transport.GAddr, lvl int) uint64 { return uint64(a) | uint64(lvl) }

func decodeRoot(w uint64) rootInfo {
	return rootInfo{addr: transport.GAddr(w &^ rootLevelMask), level: int(w & rootLevelMask)}
}

// root returns what this compute node believes the root is, reading the
// root pointer when it does not know.
func (c *client) root() (rootInfo, error) {
	p := c.x.rootOf(c.ep.Node())
	if r := p.Load(); r != nil {
		return *r, nil
	}
	if err := c.read(c.word[:], c.x.rootPtr); err != nil {
		return rootInfo{}, fmt.Errorf("reading the root pointer: %w", err)
	}
	r := decodeRoot(binary.LittleEndian.Uint64(c.word[:]))
	p.Store(&r)
	return r, nil
}

// forgetRoot makes the next traversal read the root pointer again: the
// node believed to be the root no longer spans the key space (Sherman
// broadcasts new roots by RPC instead).
func (c *client) forgetRoot() { c.x.rootOf(c.ep.Node()).Store(nil) }

func (c *client) setRoot(a transport.GAddr, lvl int) {
	c.x.rootOf(c.ep.Node()).Store(&rootInfo{addr: a, level: lvl})
}

func (c *client) cacheInsert(a transport.GAddr, img []byte) {
	c.charge(cost.Copy(len(img)))
	c.x.cache(c.ep.Node()).insert(a, img, c.ep.Rand())
}

func (c *client) lookupCached(lvl int, key []byte) *cachedNode {
	c.charge(cost.CacheLookup())
	return c.x.cache(c.ep.Node()).lookup(lvl, key)
}

func (c *client) dropParent(loc *location) {
	if loc.parent != nil {
		c.x.cache(c.ep.Node()).invalidate(loc.parent)
	}
}

// readNode READs the node at addr into buf until the image is consistent
// (no structure change writing it, versions equal).
func (c *client) readNode(buf []byte, addr transport.GAddr) error {
	for i := range maxRetries {
		if i > 0 {
			c.backoff()
		}
		if err := c.read(buf, addr); err != nil {
			return fmt.Errorf("reading node %v: %w", addr, err)
		}
		if consistent(buf) {
			return nil
		}
	}
	return fmt.Errorf("node %v still inconsistent after %d reads", addr, maxRetries)
}

// locate finds the node of level target that covers key. With fast set it
// first asks the index cache for the covering node one level up (for a
// leaf: Sherman's one lookup of a level-1 node); otherwise, or on a miss,
// it walks down from the root through cached copies where it has them
// and READs of the nodes it lacks, which it caches. It records the
// internal nodes it passes in c.path for splits.
func (c *client) locate(key []byte, target int, fast bool) (location, error) {
	nc := c.x.cache(c.ep.Node())
	for range maxRetries {
		if fast {
			n := c.lookupCached(target+1, key)
			if target == 0 {
				nc.lookups.Add(1)
				if n != nil {
					nc.hits.Add(1)
				}
			}
			if n != nil {
				return c.descend(n.addr, n.image, n, key), nil
			}
		}
		loc, err := c.walk(key, target)
		if !errors.Is(err, errStale) {
			return loc, err
		}
	}
	return location{}, fmt.Errorf("no stable path to level %d after %d restarts", target, maxRetries)
}

// descend picks the child of internal node img (at addr) covering key.
func (c *client) descend(addr transport.GAddr, img []byte, from *cachedNode, key []byte) location {
	l := &c.x.l
	lvl := level(img)
	c.path[lvl] = step{addr: addr, rng: keyRange{lo: bytes.Clone(l.low(img)), hi: bytes.Clone(l.highOrNil(img))}}
	i := l.childIndex(img, key)
	c.charge(cost.NodeSearch(count(img) + 1))
	return location{addr: l.innerChild(img, i), parent: from}
}

// walk is one traversal from the root down to level target.
func (c *client) walk(key []byte, target int) (location, error) {
	l := &c.x.l
	root, err := c.root()
	if err != nil {
		return location{}, err
	}
	if root.level < target {
		c.forgetRoot()
		return location{}, errStale
	}
	loc := location{addr: root.addr, isRoot: root.level == target}
	top := true
	for lvl := root.level; lvl > target; {
		img, cached := []byte(nil), c.lookupCached(lvl, key)
		if cached != nil {
			img = cached.image
		} else {
			img = c.aux[:l.innerBytes]
			if err := c.readNode(img, loc.addr); err != nil {
				return location{}, err
			}
			if level(img) != lvl || bytes.Compare(key, l.low(img)) < 0 {
				c.forgetRoot()
				return location{}, errStale
			}
			if !l.covers(img, key) {
				// The node split after its parent was read: follow its
				// sibling and drop the stale parent.
				c.dropParent(&loc)
				if top {
					c.forgetRoot()
				}
				loc = location{addr: sibling(img)}
				top = false
				continue
			}
			c.cacheInsert(loc.addr, img)
		}
		if top && !l.coversAll(img) {
			c.forgetRoot()
		}
		top = false
		addr := loc.addr
		if cached != nil {
			addr = cached.addr
		}
		loc = c.descend(addr, img, cached, key)
		lvl--
	}
	return loc, nil
}

// arrive checks that the leaf image img read at loc covers key. When it
// does not, the leaf split after its parent was read: coming from a
// cached parent the parent is dropped and the operation restarts from the
// root (errStale), as Sherman does; coming from a fresh parent or a
// sibling, loc moves to the right sibling (next).
func (c *client) arrive(loc *location, img, key []byte, hops int) (next bool, err error) {
	l := &c.x.l
	if level(img) != 0 || bytes.Compare(key, l.low(img)) < 0 {
		c.dropParent(loc)
		c.forgetRoot()
		return false, errStale
	}
	if loc.isRoot && !l.coversAll(img) {
		c.forgetRoot()
	}
	if l.covers(img, key) {
		return false, nil
	}
	if loc.parent != nil && hops == 0 {
		c.dropParent(loc)
		return false, errStale
	}
	*loc = location{addr: sibling(img)}
	return true, nil
}
