package chime

import (
	"bytes"
	"errors"
	"slices"

	"github.com/dmbench/dmbench/cost"
)

// Scan reads whole leaves from the one covering start, following sibling
// pointers: one READ per leaf. Hopscotch leaves are unordered, so each
// leaf's live entries are sorted locally before they are handed out.
func (c *client) Scan(start []byte, n int, fn func(key, val []byte) bool) error {
	if n <= 0 {
		return nil
	}
	leaf, parent, err := c.leafFor(start)
	if err != nil {
		return err
	}
	from := bytes.Clone(start)
	for {
		w, err := c.readWindow(leaf, 0, c.g.span)
		if errors.Is(err, errTorn) {
			continue
		}
		if err != nil {
			return err
		}
		if !w.owns(from) {
			parent = c.stale(parent)
			leaf = w.meta.sibling
			continue
		}
		var live []entry
		for _, e := range w.slots {
			if e.occupied() && bytes.Compare(e.key, from) >= 0 {
				live = append(live, e)
			}
		}
		slices.SortFunc(live, func(a, b entry) int { return bytes.Compare(a.key, b.key) })
		c.ep.Compute(int64(len(live)) * cost.NodeSearch(len(live)))
		if duplicated(live) {
			// The READ overlapped a hopscotch displacement, which writes
			// an entry's new slot before clearing its old one: read again.
			continue
		}
		for _, e := range live {
			n--
			if !fn(bytes.Clone(e.key), bytes.Clone(e.val)) || n == 0 {
				return nil
			}
		}
		if w.meta.infinite {
			return nil
		}
		from, leaf = bytes.Clone(w.meta.high), w.meta.sibling
	}
}

// duplicated reports whether sorted entries repeat a key.
func duplicated(sorted []entry) bool {
	for i := 1; i < len(sorted); i++ {
		if bytes.Equal(sorted[i-1].key, sorted[i].key) {
			return true
		}
	}
	return false
}
