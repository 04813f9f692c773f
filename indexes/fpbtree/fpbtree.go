package fpbtree

import (
	"github.com/dmbench/dmbench/indexes"
)

// Paper is the source of the FP-B+-tree as dmbench builds it.
const Paper = "DMTree (FAST'26) section 2.3, Figure 4: FP-B+-tree on DM (after FPTree, SIGMOD'16)"

// Params are the tree-shape parameters the FP-B+-tree and DMTree share.
var Params = []indexes.Param{
	{Name: "span", Kind: indexes.KindInt, Default: "32", Min: 2, Max: 255,
		Doc: "entries per leaf, one fingerprint byte each (DMTree: 32, resizable to 128)"},
	{Name: "internal_span", Kind: indexes.KindInt, Default: "32", Min: 3, Max: 1024,
		Doc: "entries per internal node (the DMTree artifact's 32 records)"},
	{Name: "bulk_fill", Kind: indexes.KindFloat, Default: "0.75", Min: 0.05, Max: 1,
		Doc: "fraction of each leaf and internal node BulkLoad fills (the paper preloads by random inserts, which leave B+-tree nodes about 70% full)"},
}

// PaperMode says why the tree relies on 64-byte cacheline atomicity.
func PaperMode(indexes.Params) string {
	return "leaf entries of up to 64 bytes (the default 8- and 24-byte keys) carry no CRC, as in the paper: a READ of one relies on each cacheline, and so the one word a WRITE changes, landing whole"
}

// ReadWindow is the artifact's MAX_HOCL_HANDOVER: a search queues behind
// at most this many searches of its key (DMTree's read_window default).
const ReadWindow = 8

func init() {
	params := append([]indexes.Param(nil), Params...)
	params = append(params, indexes.Param{Name: "combine", Kind: indexes.KindBool, Default: "false",
		Doc: "read delegation and write combining among the coroutines of a compute node (DMTree section 4.1), which the DMTree artifact compiles into the tree its FP-B+-tree baseline shares (KVConfig.h: ENABLE_WRITE_COMBINING, ENABLE_READ_DELEGATION); DMTree's Figures 3 and 17 set it"})
	indexes.Register(indexes.Spec{
		Name:      "fpbtree",
		Paper:     Paper,
		Summary:   "B+-tree with 1-byte-per-slot fingerprint tables in the leaves, cached internal nodes, locks on the memory node",
		Params:    params,
		PaperMode: PaperMode,
		Steps:     StepNames,
		New:       New,
	})
}

// New builds an FP-B+-tree: tables and locks in the leaves.
func New(env indexes.Env, p indexes.Params) (indexes.Index, error) {
	return NewTree(env, Options{
		Name: "fpbtree", Paper: Paper, Params: p,
		Span: p.Int("span"), ISpan: p.Int("internal_span"), Fill: p.Float("bulk_fill"),
		Combine: p.Bool("combine"), ReadWindow: ReadWindow,
	})
}
