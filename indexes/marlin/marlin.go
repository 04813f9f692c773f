package marlin

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/internal/inner"
	"github.com/dmbench/dmbench/transport"
)

const paper = "Marlin: A Concurrent and Write-Optimized B+-tree Index on Disaggregated Memory (An, Wang, Feng, Zou, Liu, Zhang; ICPP'23)"

func init() {
	indexes.Register(indexes.Spec{
		Name:    "marlin",
		Paper:   paper,
		Summary: "Sherman's B+-tree and cache with leaves of pointers to out-of-place items, CAS updates and an FAA ternary-state (Spear) leaf lock",
		Params: []indexes.Param{
			{Name: "span", Kind: indexes.KindInt, Default: "64", Min: 4, Max: 4096,
				Doc: "entries per leaf and keys per internal node (Marlin's 64: 1 KB nodes with 8-byte keys)"},
			{Name: "bulk_fill", Kind: indexes.KindFloat, Default: "0.75", Min: 0.05, Max: 1,
				Doc: "fraction of each node BulkLoad fills"},
		},
		New: New,
	})
}

// Index is a Marlin B+-tree on one fabric.
type Index struct {
	// tree is the internal-node layer, Sherman's: the root pointer, index
	// caches and node allocation.
	tree   inner.Tree
	env    indexes.Env
	params indexes.Params
	l      layout
	fill   float64

	itemBytes atomic.Uint64 // memory-side bytes of data items
}

// New builds an empty Marlin tree: a root leaf published in memory node
// 0's meta area unless one is there already.
func New(env indexes.Env, p indexes.Params) (indexes.Index, error) {
	if env.Fabric == nil {
		return nil, errors.New("no fabric")
	}
	if env.KeySize <= 0 || env.ValueSize < 0 || env.KeySize >= 1<<16 || env.ValueSize >= 1<<16 {
		return nil, fmt.Errorf("key size %d and value size %d: need a positive key size and sizes below 64 KiB", env.KeySize, env.ValueSize)
	}
	l, err := newLayout(env.KeySize, env.ValueSize, p.Int("span"))
	if err != nil {
		return nil, err
	}
	x := &Index{env: env, params: p, l: l, fill: p.Float("bulk_fill")}
	if err := x.tree.Init(env.Fabric, &x.l.Layout, env.CacheBytes); err != nil {
		return nil, err
	}
	img := make([]byte, x.l.leafBytes)
	x.l.InitNode(img, 0, make([]byte, x.l.KeySize), nil, 0)
	inner.SetVersions(img)
	if err := x.tree.InitRoot(img); err != nil {
		return nil, err
	}
	return x, nil
}

// Info describes the instance: the memory side counts nodes and items.
func (x *Index) Info() indexes.Info {
	info := indexes.Info{
		Name: "marlin", Paper: paper, Params: x.params,
		MemoryBytes: x.tree.NodeBytes.Load() + x.itemBytes.Load(),
	}
	x.tree.CacheInfo(&info)
	return info
}

// CopyCaches gives compute node to the index cache and root that compute
// node from's searches built (indexes.CacheCopier; inner.Tree.CopyCache
// says why that is exact): a Marlin compute node keeps nothing else.
func (x *Index) CopyCaches(src indexes.Index, from, to transport.NodeID) (bool, error) {
	s, ok := src.(*Index)
	return ok && x.tree.CopyCache(&s.tree, from, to), nil
}

// NewClient makes a client for one coroutine.
func (x *Index) NewClient(ep transport.Endpoint) indexes.Client {
	return indexes.Checked("marlin", x.l.KeySize, x.l.valSize, x.newClient(ep))
}

// newClient is NewClient's core.
func (x *Index) newClient(ep transport.Endpoint) *client {
	c := &client{x: x, tag: threadTag(ep), item: make([]byte, x.l.itemBytes)}
	c.Client.Init(&x.tree, ep, c, max(x.l.leafBytes, x.l.InnerBytes), 0)
	return c
}

// threadTag is the non-zero word a client writes into an internal node's
// lock.
func threadTag(ep transport.Endpoint) uint64 {
	return uint64(ep.Node())<<16 | uint64(ep.Thread()&0xffff) + 1
}
