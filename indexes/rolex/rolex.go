package rolex

import (
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/combine"
	"github.com/dmbench/dmbench/transport"
)

const paper = "ROLEX (Li et al., FAST'23), as ported by the CHIME authors and measured in DMTree (FAST'26) section 5"

func init() {
	indexes.Register(indexes.Spec{
		Name:    "rolex",
		Paper:   paper,
		Summary: "learned index: cached piecewise-linear models predict a leaf range read in one doorbell batch; synonym leaves absorb inserts",
		Params: []indexes.Param{
			{Name: "span", Kind: indexes.KindInt, Default: "16", Min: 2, Max: 1024,
				Doc: "entries per leaf (the port: 16 with 8-byte keys; DMTree's runs: 8 with 24-byte keys)"},
			{Name: "error", Kind: indexes.KindInt, Default: "16", Min: 1, Max: 1 << 20,
				Doc: "model error bound epsilon in positions: a search reads the leaves holding prediction +-epsilon (DMTree's runs: 8)"},
			{Name: "maskedcas", Kind: indexes.KindBool, Default: "true",
				Doc: "lock leaves with masked CAS on the lock bit, as the port; false issues a plain 64-bit CAS (MLNX_OFED >= 5.1, DMTree section 5.1)"},
			{Name: "combine", Kind: indexes.KindBool, Default: "false",
				Doc: "read delegation and write combining among the coroutines of a compute node (SMART's local lock table): off in the port's HEAD, on in the copy DMTree ran (its runs: true)"},
		},
		PaperMode: func(indexes.Params) string {
			return "a leaf READ is checked by the version byte at the start of each 64-byte line; in strict mode a line can mix old and new bytes under equal versions, so a search may return a torn entry"
		},
		New: New,
	})
}

// Rolex is one ROLEX index over a fabric.
type Rolex struct {
	env       indexes.Env
	params    indexes.Params
	g         geometry
	eps       int
	maskedCAS bool
	root      transport.GAddr // word holding the model region's address
	allocs    []*transport.Allocator
	nodes     []*nodeState  // per compute node, indexed by NodeID
	comb      combine.Nodes // nil without combine
	leafBytes atomic.Uint64
	synLeaves atomic.Uint64
	modelSize atomic.Uint64
}

// New builds an empty ROLEX: one leaf and a model without segments. With
// env.Attach it opens the ROLEX another compute node built and loaded,
// leaving its leaves, model region and root word as they are.
func New(env indexes.Env, p indexes.Params) (indexes.Index, error) {
	if env.KeySize <= 0 || env.ValueSize < 0 {
		return nil, fmt.Errorf("key size %d and value size %d: need a positive key size", env.KeySize, env.ValueSize)
	}
	g, err := newGeometry(env.KeySize, env.ValueSize, p.Int("span"))
	if err != nil {
		return nil, err
	}
	x := &Rolex{env: env, params: p, g: g, eps: p.Int("error"), maskedCAS: p.Bool("maskedcas")}
	f := env.Fabric
	cfg := f.Config()
	main, err := f.Region(cfg.MemoryNodeIDs()[0], "main")
	if err != nil {
		return nil, err
	}
	x.root = main.Base
	n := cfg.NodeCount()
	x.allocs = make([]*transport.Allocator, n)
	x.nodes = make([]*nodeState, n)
	for i := range n {
		x.allocs[i] = transport.NewAllocator(f, 0)
		x.nodes[i] = newNodeState()
		x.nodes[i].keyBytes = env.KeySize
	}
	if p.Bool("combine") {
		x.comb = combine.NewNodes(cfg, combine.ReadWindow)
	}
	if env.Attach {
		// The model, the leaves' upper fences and the leaf arrays' bases
		// live in the model region the root word names; each compute node
		// READs them on its first operation (client.model), so an
		// attaching one starts with an empty cache like any other.
		return x, nil
	}
	if err := x.load(f.Setup(cfg.MemoryNodeIDs()[0]), nil); err != nil {
		return nil, fmt.Errorf("initialising: %w", err)
	}
	return x, nil
}

// Info describes the instance.
func (x *Rolex) Info() indexes.Info {
	var cache uint64
	cfg := x.env.Fabric.Config()
	for i, st := range x.nodes {
		if cfg.Role(transport.NodeID(i)) == transport.RoleCompute {
			cache += st.bytes()
		}
	}
	params := indexes.Params{}
	for k, v := range x.params {
		params[k] = v
	}
	params["maskedcas"] = strconv.FormatBool(x.maskedCAS)
	return indexes.Info{
		Name: "rolex", Paper: paper, Params: params,
		CacheBytes:  cache,
		MemoryBytes: x.leafBytes.Load() + x.synLeaves.Load()*x.g.stride + x.modelSize.Load(),
	}
}

// NewClient makes a client for one coroutine.
func (x *Rolex) NewClient(ep transport.Endpoint) indexes.Client {
	n := ep.Node()
	return &client{x: x, ep: ep, g: &x.g, st: x.nodes[n], comb: x.comb.Client(ep), alloc: x.allocs[n], scratch: make([]byte, x.g.logical)}
}

// client runs the operations of one coroutine.
type client struct {
	x     *Rolex
	ep    transport.Endpoint
	g     *geometry
	st    *nodeState
	alloc *transport.Allocator
	// scratch holds one leaf's logical bytes while it is decoded.
	scratch []byte
	// bufs holds the leaves the current operation has read.
	bufs leafBufs
	// addrs and chain are locate's address lists, kept for the next one.
	addrs, chain []transport.GAddr
	// comb is the compute node's local lock table (combine.go); it runs
	// every operation on its own without combine.
	comb combine.Client
}
