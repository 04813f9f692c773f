package blink

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/internal/inner"
	"github.com/dmbench/dmbench/transport"
)

const paper = "SPREAD's B-link-tree baseline (Applied Sciences 2023, section 4.1), similar to FG (Ziegler et al., SIGMOD'19)"

func init() {
	indexes.Register(indexes.Spec{
		Name:    "blink",
		Paper:   paper,
		Summary: "FG-style B-link tree: no compute-side cache, 1 KB nodes spread round-robin, CRC32-checked optimistic reads, CAS locks, one-WRITE unlock",
		Steps:   []string{"crc"},
		Params: []indexes.Param{
			{Name: "node_bytes", Kind: indexes.KindInt, Default: "1024", Min: 128, Max: 65536,
				Doc: "bytes per node, leaves and internal nodes alike (FG: 1 KB), a multiple of 64"},
			{Name: "bulk_fill", Kind: indexes.KindFloat, Default: "0.75", Min: 0.05, Max: 1,
				Doc: "fraction of each node BulkLoad fills"},
		},
		New: New,
	})
}

// nodeAlign aligns nodes to cachelines, so that the rear word shares the
// last cacheline of its node.
const nodeAlign = transport.CachelineBytes

// maxRetries bounds every retry loop (re-reads of torn nodes, CASes on a
// held lock, waits for a new root). Each retry issues a verb, so time moves
// on; the bound only turns a livelock into an error.
const maxRetries = 1 << 20

// Index is a B-link tree on one fabric.
type Index struct {
	env     indexes.Env
	params  indexes.Params
	l       layout
	fill    float64
	rootPtr transport.GAddr // the root word in memory node 0's meta area
	setupEP transport.Endpoint
	setup   *transport.Allocator
	allocs  []*transport.Allocator // per compute node
	firstCN transport.NodeID
	nodes   atomic.Uint64 // nodes allocated
}

// New builds an empty tree: a root leaf published in memory node 0's meta
// area (unless one is there already).
func New(env indexes.Env, p indexes.Params) (indexes.Index, error) {
	if env.Fabric == nil {
		return nil, errors.New("no fabric")
	}
	if env.KeySize <= 0 || env.ValueSize < 0 {
		return nil, fmt.Errorf("key size %d and value size %d: need a positive key size", env.KeySize, env.ValueSize)
	}
	size := p.Int("node_bytes")
	if size%nodeAlign != 0 {
		return nil, fmt.Errorf("node_bytes %d is not a multiple of %d", size, nodeAlign)
	}
	l, err := newLayout(env.KeySize, env.ValueSize, size)
	if err != nil {
		return nil, err
	}
	f := env.Fabric
	cfg := f.Config()
	x := &Index{env: env, params: p, l: l, fill: p.Float("bulk_fill"), firstCN: transport.NodeID(cfg.MemoryNodes)}
	if x.setupEP, x.setup, x.rootPtr, err = inner.Setup(f); err != nil {
		return nil, err
	}
	x.allocs = make([]*transport.Allocator, cfg.ComputeNodes)
	for i := range x.allocs {
		x.allocs[i] = transport.NewAllocator(f, 0)
	}
	if err := x.initRoot(); err != nil {
		return nil, err
	}
	return x, nil
}

// initRoot publishes an empty root leaf spanning the key space unless a
// root exists.
func (x *Index) initRoot() error {
	img := make([]byte, x.l.size)
	x.l.initNode(img, 0, make([]byte, x.l.keySize), nil, 0)
	seal(img, 1)
	return inner.InitRoot(x.setupEP, x.rootPtr, img, func() (transport.GAddr, error) {
		return x.allocNode(x.setupEP, x.setup)
	})
}

// allocNode takes a node from a, on the memory nodes in turn: FG's
// fine-grained round-robin distribution.
func (x *Index) allocNode(ep transport.Endpoint, a *transport.Allocator) (transport.GAddr, error) {
	addr, err := a.Alloc(ep, uint64(x.l.size), nodeAlign)
	if err != nil {
		return 0, err
	}
	x.nodes.Add(1)
	return addr, nil
}

// Uncached is true: every operation reads the root pointer and walks down
// from memory, so a search leaves nothing behind on its compute node.
func (x *Index) Uncached() bool { return true }

// Info describes the instance. The tree has no compute-side cache.
func (x *Index) Info() indexes.Info {
	p := indexes.Params{}
	for k, v := range x.params {
		p[k] = v
	}
	return indexes.Info{
		Name: "blink", Paper: paper, Params: p,
		MemoryBytes: x.nodes.Load() * uint64(x.l.size),
	}
}

// NewClient makes a client for one coroutine.
func (x *Index) NewClient(ep transport.Endpoint) indexes.Client {
	return indexes.Checked("blink", x.l.keySize, x.l.valSize, x.newClient(ep))
}

// newClient is NewClient's core, which the tests drive directly.
func (x *Index) newClient(ep transport.Endpoint) *client {
	c := &client{x: x, ep: ep, alloc: x.setup}
	if i := int(ep.Node()) - int(x.firstCN); i >= 0 && i < len(x.allocs) {
		c.alloc = x.allocs[i]
	}
	size := x.l.size
	c.buf, c.lk, c.sib, c.root = make([]byte, size), make([]byte, size), make([]byte, size), make([]byte, size)
	return c
}
