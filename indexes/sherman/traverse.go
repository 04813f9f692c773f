package sherman

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// errStale restarts an operation from the root: a node it reached was
// not where its cached or believed parent said.
var errStale = errors.New("stale path")

// location is a node a traversal arrived at: its address, the key range
// its parent gave it (a superset of its range now: nodes only shrink),
// and the cached parent it came from, which is stale if the node turns
// out not to cover the key.
type location struct {
	addr   transport.GAddr
	rng    keyRange
	parent *cachedNode
	isRoot bool // the node is the root this compute node knows
}

// root returns what this compute node believes the root is, reading the
// root pointer when it does not know.
func (c *client) root() (rootInfo, error) {
	p := c.x.rootOf(c.ep.Node())
	if r := p.Load(); r != nil {
		return *r, nil
	}
	if err := c.read(c.w1[:], c.x.rootPtr); err != nil {
		return rootInfo{}, fmt.Errorf("reading the root pointer: %w", err)
	}
	r := decodeRoot(lockWord(c.w1[:]))
	p.Store(&r)
	return r, nil
}

// The root pointer word holds the root's address with its level in the
// low bits, which node alignment leaves zero, so that one CAS installs
// both and one READ learns both (Sherman's new-root broadcast carries the
// level too).
const rootLevelMask = nodeAlign - 1

func rootWord(a transport.GAddr, lvl int) uint64 { return uint64(a) | uint64(lvl) }

func decodeRoot(w uint64) rootInfo {
	return rootInfo{addr: transport.GAddr(w &^ rootLevelMask), level: int(w & rootLevelMask)}
}

// forgetRoot makes the next traversal read the root pointer again: the
// node believed to be the root no longer spans the key space, so the
// tree has grown (Sherman broadcasts new roots by RPC instead).
func (c *client) forgetRoot() { c.x.rootOf(c.ep.Node()).Store(nil) }

// setRoot records a root this client installed.
func (c *client) setRoot(a transport.GAddr, lvl int) {
	c.x.rootOf(c.ep.Node()).Store(&rootInfo{addr: a, level: lvl})
}

func (c *client) fullRange() keyRange {
	return keyRange{lo: make([]byte, c.x.l.keySize), known: true}
}

func (c *client) cacheInsert(a transport.GAddr, img []byte) {
	c.charge(cost.Copy(len(img)))
	c.x.cache(c.ep.Node()).insert(a, img, c.ep.Rand())
}

// lookupCached is one index-cache lookup, charged.
func (c *client) lookupCached(lvl int, key []byte) *cachedNode {
	c.charge(cost.CacheLookup())
	return c.x.cache(c.ep.Node()).lookup(lvl, key, &c.probe)
}

// locate finds the node of level target that covers key. With fast set it
// first asks the index cache for the covering node one level up (for a
// leaf: Sherman's single cache lookup of a level-1 node); otherwise, or
// on a miss, it walks down from the root through cached copies where it
// has them and READs of the nodes it lacks, which it caches. It records
// the internal nodes it passes in c.path for splits to come.
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
// The fences it records alias img when img is from's cached image, which
// is never written after it is cached; an image just read into the
// client's reused buffer (from nil) is copied out of it.
func (c *client) descend(addr transport.GAddr, img []byte, from *cachedNode, key []byte) location {
	l := &c.x.l
	lvl := level(img)
	own := func(b []byte) []byte {
		if from != nil {
			return b
		}
		return bytes.Clone(b)
	}
	c.path[lvl] = step{addr: addr, rng: keyRange{lo: own(l.low(img)), hi: own(l.highOrNil(img)), known: true}}
	i := l.childIndex(img, key)
	c.charge(cost.NodeSearch(count(img) + 1))
	r := l.childRange(img, i)
	r.lo, r.hi = own(r.lo), own(r.hi)
	return location{addr: l.innerChild(img, i), rng: r, parent: from}
}

// walk is one traversal from the root down to level target.
func (c *client) walk(key []byte, target int) (location, error) {
	l := &c.x.l
	root, err := c.root()
	if err != nil {
		return location{}, err
	}
	if root.level < target {
		// The root this node knows is below the level wanted: a new root
		// is being installed by the client that split the old one.
		c.forgetRoot()
		return location{}, errStale
	}
	loc := location{addr: root.addr, rng: c.fullRange(), isRoot: root.level == target}
	top := true
	for lvl := root.level; lvl > target; {
		img, cached := []byte(nil), c.lookupCached(lvl, key)
		if cached != nil {
			img = cached.image
		} else {
			img = c.aux[:l.innerBytes]
			if err := c.readNode(img, loc.addr, c.classOf(loc.rng)); err != nil {
				return location{}, err
			}
			if level(img) != lvl || bytes.Compare(key, l.low(img)) < 0 {
				c.forgetRoot()
				return location{}, errStale
			}
			if !l.covers(img, key) {
				// The node split after its parent (or the root pointer)
				// was read: follow its sibling, and drop the stale parent.
				if loc.parent != nil {
					c.x.cache(c.ep.Node()).invalidate(loc.parent)
				}
				if top {
					c.forgetRoot()
				}
				loc = location{addr: sibling(img), rng: keyRange{lo: bytes.Clone(l.high(img))}}
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
