package sherman

import (
	"fmt"
	"iter"

	"github.com/dmbench/dmbench/indexes/internal/inner"
	"github.com/dmbench/dmbench/transport"
)

// BulkLoad builds the tree bottom-up from kvs (strictly increasing keys)
// through a setup endpoint: leaves filled to bulk_fill of their capacity
// and linked by sibling pointers, then each internal level over the one
// below, then the root pointer, which replaces the empty root New made.
// Sherman has no bulk load (DEX fills it by inserts); this writes the same
// kind of tree at a chosen fill, outside simulated time. In P-Sherman a
// leaf never spans a partition bound, so every leaf belongs to one
// compute node. A node is filled to at most all but one of its slots,
// since a full node splits.
func (x *Index) BulkLoad(ep transport.Endpoint, kvs iter.Seq2[[]byte, []byte]) error {
	l := &x.l
	b := x.tree.NewBulk(ep, l.leafBytes, l.setConsistent)
	perLeaf := inner.BulkFill(x.fill, l.leafCard, 1)
	n, err := inner.EachPair(kvs, l.KeySize, l.valSize, func(prev, k, v []byte) error {
		var err error
		switch {
		case prev == nil:
			err = b.Start(make([]byte, l.KeySize))
		case x.parts != nil && x.parts.index(prev) != x.parts.index(k):
			err = b.Next(x.parts.bounds[x.parts.index(k)])
		case b.N == perLeaf:
			err = b.Next(k)
		}
		if err != nil {
			return err
		}
		l.writeEntry(l.entry(b.Leaf, b.N), k, v)
		b.N++
		return nil
	})
	if err == nil && n > 0 {
		err = b.Finish(inner.BulkFill(x.fill, l.InnerCard, 1) + 1)
	}
	if err != nil {
		return fmt.Errorf("sherman: bulk load: %w", err)
	}
	return nil
}
