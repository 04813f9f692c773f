package dmtree

import (
	"fmt"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/fpbtree"
	"github.com/dmbench/dmbench/transport"
)

// Paper is DMTree's source.
const Paper = "DMTree: Towards Efficient Tree Indexing on Disaggregated Memory via Compute-side Collaborative Design (Wei et al., FAST'26)"

// The ablation steps of Figure 16, each adding to the one before.
const (
	VariantFPBTree = "fpbtree" // the basic FP-B+-tree, with read delegation and write combining
	VariantRDMAOpt = "rdmaopt" // + empty-entry filtering on scans
	VariantCache   = "cache"   // + collaborative fingerprint storage on compute nodes
	VariantConcur  = "concur"  // + compute-side locking: full DMTree
)

func init() {
	params := append([]indexes.Param(nil), fpbtree.Params...)
	params = append(params,
		indexes.Param{Name: "variant", Kind: indexes.KindEnum, Default: VariantConcur,
			Values: []string{VariantFPBTree, VariantRDMAOpt, VariantCache, VariantConcur},
			Doc:    "ablation step of Figure 16: fpbtree (with read delegation and write combining, as the artifact compiles them), rdmaopt (+scan filtering), cache (+collaborative fingerprint storage), concur (+compute-side locks; full DMTree)"},
		indexes.Param{Name: "read_window", Kind: indexes.KindInt, Default: fmt.Sprint(fpbtree.ReadWindow), Min: 1, Max: 1024,
			Doc: "read delegation: a search queues behind the searches of its key on its compute node while at most this many are queued, else runs on its own (the artifact's MAX_HOCL_HANDOVER); write combining is unbounded (section 4.1)"},
		indexes.Param{Name: "vnodes", Kind: indexes.KindInt, Default: "64", Min: 1, Max: 4096,
			Doc: "virtual nodes per compute node on the consistent-hashing ring of primary tables (section 3.2.3)"},
		indexes.Param{Name: "fp_region_bytes", Kind: indexes.KindInt, Default: "268435456", Min: 4096, Max: 1 << 40,
			Doc: "bytes of the fingerprint-table region each compute node registers (mapped lazily; 64 bytes a leaf, striped over compute nodes)"},
	)
	indexes.Register(indexes.Spec{
		Name:      "dmtree",
		Paper:     Paper,
		Summary:   "FP-B+-tree with fingerprint tables and leaf locks on compute nodes (collaborative caching and locking)",
		Params:    params,
		PaperMode: fpbtree.PaperMode,
		Steps:     fpbtree.StepNames,
		New:       New,
	})
}

// DMTree is the index: the FP-B+-tree with DMTree's placement.
type DMTree struct {
	*fpbtree.Tree
	collab *collaborative // nil for the variants that keep tables in the leaves
}

// New builds DMTree or one of its ablation steps.
func New(env indexes.Env, p indexes.Params) (indexes.Index, error) {
	variant := p.String("variant")
	o := fpbtree.Options{
		Name: "dmtree", Paper: Paper, Params: p,
		Span: p.Int("span"), ISpan: p.Int("internal_span"), Fill: p.Float("bulk_fill"),
		FilterScans: variant != VariantFPBTree,
		Combine:     true,
		ReadWindow:  p.Int("read_window"),
	}
	d := &DMTree{}
	if variant == VariantCache || variant == VariantConcur {
		if env.Fabric.Config().ComputeNodes == 0 {
			return nil, fmt.Errorf("variant %s keeps fingerprint tables on compute nodes: the cluster has none", variant)
		}
		g := fpbtree.NewGeometry(env.KeySize, env.ValueSize, o.Span, o.ISpan)
		c, err := newCollaborative(env.Fabric, &g, uint64(p.Int("fp_region_bytes")), p.Int("vnodes"), env.Attach)
		if err != nil {
			return nil, err
		}
		d.collab = c
		o.Placement = c
		if variant == VariantCache {
			o.Placement = fpbtree.LeafHeaderLock{Placement: c}
		}
	}
	t, err := fpbtree.NewTree(env, o)
	if err != nil {
		return nil, err
	}
	d.Tree = t
	return d, nil
}

// Info adds the primary fingerprint tables to the compute-side bytes.
func (d *DMTree) Info() indexes.Info {
	in := d.Tree.Info()
	if d.collab != nil {
		in.CacheBytes += d.collab.bytes()
	}
	return in
}

// CopyCaches gives compute node to what a search of every record left on
// compute node from of src (indexes.CacheCopier): the tree's cache and
// counts, and the fingerprint-table copies the searches stored in to's
// region.
func (d *DMTree) CopyCaches(src indexes.Index, from, to transport.NodeID) (bool, error) {
	s, ok := src.(*DMTree)
	if !ok || (s.collab == nil) != (d.collab == nil) {
		return false, nil
	}
	if _, err := d.Tree.CopyCaches(s.Tree, from, to); err != nil {
		return false, err
	}
	if d.collab == nil {
		return true, nil
	}
	if err := d.collab.copyTables(s.collab, from, to); err != nil {
		return false, err
	}
	return true, nil
}

// PrimaryNode is the compute node holding the primary table at offset fp
// (for tests and tools; 0 and false for variants without one).
func (d *DMTree) PrimaryNode(fp uint64) (transport.NodeID, bool) {
	if d.collab == nil {
		return 0, false
	}
	return d.collab.ring.Load().lookup(fp), true
}

// FailComputeNode removes a failed compute node from the ring and has the
// survivors rebuild, from the leaves on the memory nodes, every table it
// was primary for (section 4.3); ep is an endpoint on a survivor. Nothing
// is read from the failed node. It must run while writers are quiesced:
// a lock held on the failed node dies with it, and the paper leaves the
// membership protocol to a failure detector outside the index. It returns
// how many tables were rebuilt.
func (d *DMTree) FailComputeNode(ep transport.Endpoint, failed transport.NodeID) (int, error) {
	if d.collab == nil {
		return 0, nil
	}
	if ep.Node() == failed {
		return 0, fmt.Errorf("fail compute node %d: recovery must run on a survivor", failed)
	}
	old := d.collab.ring.Load()
	nr, err := old.without(failed)
	if err != nil {
		return 0, fmt.Errorf("fail compute node %d: %w", failed, err)
	}
	d.collab.ring.Store(nr)
	c := d.Tree.Client(ep)
	rebuilt := 0
	err = c.WalkLeaves(func(leaf transport.GAddr, fp uint64) error {
		if old.lookup(fp) != failed {
			return nil
		}
		rebuilt++
		return c.RebuildTable(leaf, fp)
	})
	if err != nil {
		return rebuilt, fmt.Errorf("fail compute node %d: %w", failed, err)
	}
	return rebuilt, nil
}
