package rolex

import (
	"bytes"
	"slices"

	"github.com/dmbench/dmbench/cost"
)

// Scan follows the port's range query over the interval [start,
// start+n): one doorbell batch reads every leaf from the model's first
// leaf for start to its last leaf for start+n, with their synonym leaves.
// On dense integer keys (DMTree's scan workloads) that interval holds the
// n entries; when it holds fewer, the scan goes on through the following
// leaves, one batch at a time, each sized to the entries still missing.
func (c *client) Scan(start []byte, n int, fn func(key, val []byte) bool) error {
	c.bufs.reset()
	if n <= 0 {
		return nil
	}
	m, err := c.model()
	if err != nil {
		return err
	}
	c.ep.Compute(2 * cost.NodeSearch(len(m.segs)))
	l, _ := m.leafRange(start)
	_, r := m.leafRange(addKey(start, uint64(n)))
	r = max(r, l)
	g := c.g
	type entry struct{ key, val []byte }
	for {
		groups, err := c.readGroups(m, l, r, true)
		if err != nil {
			return err
		}
		for _, gr := range groups {
			var es []entry
			for _, lf := range gr.leaves {
				for i := 0; i < lf.n; i++ {
					if k := g.key(lf, i); bytes.Compare(k, start) >= 0 {
						es = append(es, entry{k, g.val(lf, i)})
					}
				}
			}
			c.ep.Compute(int64(len(es)) * cost.NodeSearch(len(es)))
			// A key seen in two leaves of a chain was moved by a split
			// between their READs; the later leaf holds the newer copy.
			slices.SortStableFunc(es, func(a, b entry) int { return bytes.Compare(a.key, b.key) })
			for i, e := range es {
				if i+1 < len(es) && bytes.Equal(es[i+1].key, e.key) {
					continue
				}
				if !fn(slices.Clone(e.key), slices.Clone(e.val)) {
					return nil
				}
				if n--; n == 0 {
					return nil
				}
			}
		}
		if r >= m.leaves-1 {
			return nil
		}
		l = r + 1
		r = min(m.leaves-1, l+(n+g.span-1)/g.span-1)
	}
}

// addKey is key+d as a big-endian integer, saturating at all ones.
func addKey(key []byte, d uint64) []byte {
	out := slices.Clone(key)
	for i := len(out) - 1; i >= 0 && d > 0; i-- {
		s := uint64(out[i]) + d&0xff
		out[i] = byte(s)
		d = d>>8 + s>>8
	}
	if d > 0 {
		for i := range out {
			out[i] = 0xff
		}
	}
	return out
}
