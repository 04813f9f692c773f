package dolphin

import (
	"fmt"
	"iter"

	"github.com/dmbench/dmbench/transport"
)

// BulkLoad inserts kvs through the ordinary insert path on a setup
// endpoint (outside simulated time): Dolphin has no bulk builder, and the
// paper warms its tree by inserting (section IV.A), so the leaves and
// special nodes come out as inserts shape them.
func (x *Index) BulkLoad(ep transport.Endpoint, kvs iter.Seq2[[]byte, []byte]) error {
	c := x.NewClient(ep).(*client)
	n := 0
	for k, v := range kvs {
		if err := c.Insert(k, v); err != nil {
			return fmt.Errorf("bulk load, key %d (%x): %w", n, k, err)
		}
		n++
	}
	c.flush()
	return nil
}
