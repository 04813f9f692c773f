package sherman

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"iter"
	"testing"

	"github.com/google/btree"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/local"
	"github.com/dmbench/dmbench/transport/sim"
)

// cluster is the shape most tests run on: two memory nodes with on-chip
// memory, compute nodes after them.
func cluster(computeNodes, threads int, mode transport.Mode) transport.Config {
	return transport.Config{
		ComputeNodes: computeNodes, MemoryNodes: 2, Threads: threads,
		MemoryCores: 2, ComputeCores: 1, MemoryBytes: 256 << 20,
		DeviceBytes: 256 << 10, Mode: mode, Seed: 7,
	}
}

func newFabric(t testing.TB, fabric string, cfg transport.Config) transport.Fabric {
	t.Helper()
	var f transport.Fabric
	var err error
	switch fabric {
	case "sim":
		f, err = sim.New(cfg, sim.CX6)
	case "local":
		f, err = local.New(cfg)
	default:
		t.Fatalf("unknown fabric %q", fabric)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// build makes a sherman index with raw parameters on f.
func build(t testing.TB, f transport.Fabric, raw map[string]string, cacheBytes uint64, parts [][]byte) *Index {
	t.Helper()
	return indextest.Build(t, "sherman", indexes.Env{Fabric: f, KeySize: 8, ValueSize: 8, CacheBytes: cacheBytes, Partitions: parts}, raw).(*Index)
}

func key(i uint64) []byte { return binary.BigEndian.AppendUint64(nil, i) }
func val(i uint64) []byte { return binary.LittleEndian.AppendUint64(nil, i) }

// loadSeq yields keys step, 2*step, ... (n of them) with values key+1.
func loadSeq(n, step uint64) iter.Seq2[[]byte, []byte] {
	return indextest.Pairs(n, func(i uint64) []byte { return key((i + 1) * step) },
		func(i uint64) []byte { return val((i+1)*step + 1) })
}

// model is the sorted map of the entries a test expects.
type model struct {
	vals map[string][]byte
	keys *btree.BTreeG[string]
}

func newModel() *model {
	return &model{vals: map[string][]byte{}, keys: btree.NewG(16, func(a, b string) bool { return a < b })}
}

func (m *model) set(k, v []byte) {
	m.vals[string(k)] = v
	m.keys.ReplaceOrInsert(string(k))
}

func (m *model) del(k []byte) {
	delete(m.vals, string(k))
	m.keys.Delete(string(k))
}

func (m *model) get(k []byte) ([]byte, bool) {
	v, ok := m.vals[string(k)]
	return v, ok
}

func (m *model) len() int { return len(m.vals) }

// sorted lists the keys in order.
func (m *model) sorted() []string {
	var ks []string
	m.keys.Ascend(func(k string) bool {
		ks = append(ks, k)
		return true
	})
	return ks
}

// scanAll collects a full scan from the zero key.
func scanAll(c indexes.Client, n int) ([][2][]byte, error) {
	var out [][2][]byte
	err := c.Scan(key(0), n, func(k, v []byte) bool {
		out = append(out, [2][]byte{k, v})
		return true
	})
	return out, err
}

// checkScan compares a scan's result with the model from start on.
func checkScan(m *model, start []byte, n int, got [][2][]byte) error {
	var want []string
	m.keys.AscendGreaterOrEqual(string(start), func(k string) bool {
		want = append(want, k)
		return len(want) < n
	})
	if len(got) != len(want) {
		return fmt.Errorf("scan from %x for %d: %d entries, want %d", start, n, len(got), len(want))
	}
	for i := range got {
		if string(got[i][0]) != want[i] || !bytes.Equal(got[i][1], m.vals[want[i]]) {
			return fmt.Errorf("scan from %x entry %d: %x=%x, want %x=%x", start, i, got[i][0], got[i][1], want[i], m.vals[want[i]])
		}
	}
	return nil
}
