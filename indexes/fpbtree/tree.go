package fpbtree

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/combine"
	"github.com/dmbench/dmbench/transport"
)

// Options configure a Tree: the FP-B+-tree itself and the DMTree
// mechanisms that package dmtree switches on.
type Options struct {
	Name, Paper string
	Params      indexes.Params
	// Span and ISpan are the entries per leaf and per internal node.
	Span, ISpan int
	// Fill is the fraction of each leaf and internal node BulkLoad fills.
	Fill float64
	// Placement places fingerprint tables and leaf locks; nil is InLeaf.
	Placement Placement
	// FilterScans reads a leaf's table first and then only its non-empty
	// entries (DMTree section 4.1, Figure 10); otherwise a scan READs
	// whole leaves.
	FilterScans bool
	// Combine turns on read delegation and write combining (section
	// 4.1); a search queues on its key only while at most ReadWindow
	// searches are queued there (combine.go).
	Combine    bool
	ReadWindow int
}

// Tree is an FP-B+-tree on disaggregated memory.
type Tree struct {
	opts  Options
	G     Geometry
	env   indexes.Env
	place Placement
	// root is the word on memory node 0 holding the root node's address.
	root   transport.GAddr
	allocs []*transport.Allocator // per node, indexed by NodeID
	nodes  []*nodeState           // per node, indexed by NodeID
	comb   combine.Nodes          // nil without Options.Combine
	leaves atomic.Uint64          // leaves and internal nodes allocated, for Info
	inners atomic.Uint64
}

// nodeState is what the clients of one compute node share.
type nodeState struct {
	cache *nodeCache
	mu    sync.Mutex                     // guards locks; never held across a verb
	locks map[transport.GAddr]*localLock // by lock word, while queued
}

// NewTree builds an empty tree: one empty leaf under a one-entry root;
// with env.Attach it opens the tree another compute node built.
func NewTree(env indexes.Env, o Options) (*Tree, error) {
	if env.KeySize < 1 || env.ValueSize < 0 {
		return nil, fmt.Errorf("key size %d, value size %d: need a positive key size", env.KeySize, env.ValueSize)
	}
	if o.Span < 2 || o.Span > 255 || o.ISpan < 3 {
		return nil, fmt.Errorf("span %d, internal span %d: need 2-255 leaf entries and at least 3 internal entries", o.Span, o.ISpan)
	}
	t := &Tree{opts: o, env: env, G: NewGeometry(env.KeySize, env.ValueSize, o.Span, o.ISpan)}
	t.place = o.Placement
	if t.place == nil {
		t.place = InLeaf{G: &t.G}
	}
	f := env.Fabric
	cfg := f.Config()
	main, err := f.Region(cfg.MemoryNodeIDs()[0], "main")
	if err != nil {
		return nil, fmt.Errorf("root pointer: %w", err)
	}
	t.root = main.Base
	t.allocs = make([]*transport.Allocator, cfg.NodeCount())
	t.nodes = make([]*nodeState, cfg.NodeCount())
	for i := range t.nodes {
		t.allocs[i] = transport.NewAllocator(f, 0)
		t.nodes[i] = &nodeState{
			cache: newNodeCache(env.CacheBytes, t.G.NodeSize),
			locks: map[transport.GAddr]*localLock{},
		}
	}
	if o.Combine {
		t.comb = combine.NewNodes(cfg, o.ReadWindow)
	}
	if env.Attach {
		// The tree is in memory already, reachable from the root word
		// that every traversal READs; a second build would replace it.
		return t, nil
	}
	if err := t.build(f.Setup(cfg.ComputeNodeIDs()[0]), nil); err != nil {
		return nil, fmt.Errorf("empty tree: %w", err)
	}
	return t, nil
}

// Placement is the tree's fingerprint-table placement.
func (t *Tree) Placement() Placement { return t.place }

// Info describes the tree.
func (t *Tree) Info() indexes.Info {
	var cache, hits, lookups uint64
	for _, id := range t.env.Fabric.Config().ComputeNodeIDs() {
		c := t.nodes[id].cache
		cache += c.size()
		hits += c.hits.Load()
		lookups += c.lookups.Load()
	}
	return indexes.Info{
		Name: t.opts.Name, Paper: t.opts.Paper, Params: t.opts.Params,
		CacheBytes:   cache,
		MemoryBytes:  t.leaves.Load()*uint64(t.G.LeafSize) + t.inners.Load()*uint64(t.G.NodeSize),
		CacheHits:    hits,
		CacheLookups: lookups,
	}
}

// CopyCaches gives compute node to compute node from's cache of
// bottom-level nodes and its combining counts (indexes.CacheCopier): a
// search changes nothing else, and the bulk load caches nothing. With a
// placement that keeps table copies on compute nodes (DMTree), the
// searches also stored those; package dmtree copies them. src is a *Tree.
func (t *Tree) CopyCaches(src indexes.Index, from, to transport.NodeID) (bool, error) {
	s, ok := src.(*Tree)
	if !ok {
		return false, nil
	}
	t.nodes[to].cache = s.nodes[from].cache.clone()
	t.comb.CopyCounts(s.comb, from, to)
	return true, nil
}

// NewClient makes a client for one coroutine.
func (t *Tree) NewClient(ep transport.Endpoint) indexes.Client { return t.Client(ep) }

// Client makes a client; package dmtree wraps it.
func (t *Tree) Client(ep transport.Endpoint) *Client {
	return &Client{t: t, ep: ep, ns: t.nodes[ep.Node()], alloc: t.allocs[ep.Node()], comb: t.comb.Client(ep)}
}

// readRoot READs the root pointer.
func (c *Client) readRoot() (transport.GAddr, error) {
	var b [8]byte
	if err := c.ep.Read(b[:], c.t.root); err != nil {
		return 0, fmt.Errorf("read root pointer: %w", err)
	}
	return transport.GAddr(binary.LittleEndian.Uint64(b[:])), nil
}
