package sherman

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

// TestSequentialAgainstModel drives one client through random inserts,
// updates, deletes, searches and scans on a key space that forces many
// leaf and internal splits, checking every answer against a sorted map.
func TestSequentialAgainstModel(t *testing.T) {
	for _, v := range consistencyNames {
		for _, nb := range []string{"1024", "256", "256/nocache"} {
			for _, bulk := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/node%s/bulk=%v", v, nb, bulk), func(t *testing.T) {
					f := newFabric(t, "sim", cluster(1, 1, transport.ModePaper))
					cache := uint64(1 << 20)
					if nb == "256/nocache" {
						nb, cache = "256", 0
					}
					x := build(t, f, map[string]string{"consistency": v, "node_bytes": nb}, cache, nil)
					m := newModel()
					if bulk {
						if err := x.BulkLoad(f.Setup(2), loadSeq(3000, 3)); err != nil {
							t.Fatal(err)
						}
						for k, v := range loadSeq(3000, 3) {
							m.set(k, v)
						}
					}
					f.Go(2, 0, func(ep transport.Endpoint) {
						if err := randomOps(x.NewClient(ep), m, rand.New(rand.NewPCG(1, 2)), 10000/scale, 20000/scale); err != nil {
							t.Error(err)
						}
					})
					if err := f.Run(); err != nil {
						t.Fatal(err)
					}
				})
			}
		}
	}
}

// randomOps runs ops random operations on keys below space, checking them
// against m, then checks a full scan.
func randomOps(c indexes.Client, m *model, rng *rand.Rand, ops int, space uint64) error {
	for i := range ops {
		k := key(rng.Uint64N(space))
		v := val(rng.Uint64())
		switch p := rng.IntN(100); {
		case p < 40:
			if err := c.Insert(k, v); err != nil {
				return fmt.Errorf("op %d insert %x: %w", i, k, err)
			}
			m.set(k, v)
		case p < 55:
			err := c.Update(k, v)
			_, had := m.get(k)
			if had && err != nil || !had && !errors.Is(err, indexes.ErrNotFound) {
				return fmt.Errorf("op %d update %x (present %v): %v", i, k, had, err)
			}
			if had {
				m.set(k, v)
			}
		case p < 65:
			err := c.Delete(k)
			_, had := m.get(k)
			if had && err != nil || !had && !errors.Is(err, indexes.ErrNotFound) {
				return fmt.Errorf("op %d delete %x (present %v): %v", i, k, had, err)
			}
			m.del(k)
		case p < 95:
			got, found, err := c.Search(k)
			want, had := m.get(k)
			if err != nil || found != had || !bytes.Equal(got, want) {
				return fmt.Errorf("op %d search %x = %x, %v, %v; want %x, %v", i, k, got, found, err, want, had)
			}
		default:
			n := 1 + rng.IntN(150)
			var got [][2][]byte
			err := c.Scan(k, n, func(k, v []byte) bool {
				got = append(got, [2][]byte{k, v})
				return true
			})
			if err != nil {
				return fmt.Errorf("op %d scan: %w", i, err)
			}
			if err := checkScan(m, k, n, got); err != nil {
				return fmt.Errorf("op %d: %w", i, err)
			}
		}
	}
	got, err := scanAll(c, m.len()+10)
	if err != nil {
		return err
	}
	return checkScan(m, key(0), m.len()+10, got)
}
