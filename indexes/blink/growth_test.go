package blink_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
)

// Every client of 3 compute nodes of 8 threads inserts into an empty tree
// of 128-byte nodes (5 entries per leaf, 4 keys per internal node) at
// once, half of them in ascending key order onto the rightmost leaf, so
// that splits of leaves and internal nodes race each other and the tree
// grows to eight levels. Afterwards every key is found and a scan returns
// them all in order. (TestSplitWaitsForNewRoot stages the race of a root
// split, which is too rare to count on here.)
func TestConcurrentGrowth(t *testing.T) {
	const perClient = 300
	for _, fc := range []struct {
		fabric string
		mode   transport.Mode
	}{
		{indextest.Sim, transport.ModePaper},
		{indextest.Sim, transport.ModeStrict},
		{indextest.Local, transport.ModeStrict},
	} {
		t.Run(fmt.Sprintf("%s/%s", fc.fabric, fc.mode), func(t *testing.T) {
			if fc.fabric == indextest.Sim && raceEnabled {
				t.Skip("the race detector's target is the local fabric")
			}
			cfg := indextest.Config(fc.mode, 7)
			cfg.Threads = 8
			in := indextest.New(t, "blink", map[string]string{"node_bytes": "128"},
				indextest.Options{Fabric: fc.fabric, Config: cfg})
			nodes := in.ComputeNodes()
			clients := in.Workers(nodes)
			key := func(i uint64) []byte { return binary.BigEndian.AppendUint64(nil, i+1) }
			in.GoAll(nodes, func(w indextest.Worker, ep transport.Endpoint, c indexes.Client) {
				order := make([]uint64, perClient)
				for i := range order {
					order[i] = uint64(i*clients + w.ID)
				}
				if w.ID%2 == 1 {
					ep.Rand().Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
				}
				for _, i := range order {
					if err := c.Insert(key(i), key(i)); err != nil {
						t.Errorf("%v: insert %d: %v", w, i, err)
						return
					}
				}
			})
			in.Run(t)
			total := uint64(clients * perClient)
			in.GoAll(nodes[:1], func(w indextest.Worker, _ transport.Endpoint, c indexes.Client) {
				if w.ID != 0 {
					return
				}
				for i := range total {
					v, ok, err := c.Search(key(i))
					if err != nil || !ok || !bytes.Equal(v, key(i)) {
						t.Errorf("search %d = %x, %v, %v", i, v, ok, err)
						return
					}
				}
				var next uint64
				err := c.Scan(make([]byte, 8), int(total)+1, func(k, v []byte) bool {
					if !bytes.Equal(k, key(next)) || !bytes.Equal(v, key(next)) {
						t.Errorf("scan entry %d: %x = %x", next, k, v)
						return false
					}
					next++
					return true
				})
				if err != nil || next != total {
					t.Errorf("scan returned %d of %d entries: %v", next, total, err)
				}
			})
			in.Run(t)
			if h := height(t, in); h < 6 {
				t.Errorf("the tree has %d levels, want at least 6", h)
			}
		})
	}
}

// height reads the root level from the root pointer: the first word of
// memory node 0's main region.
func height(t *testing.T, in *indextest.Instance) int {
	r, err := in.Fabric.Region(0, "main")
	if err != nil {
		t.Fatal(err)
	}
	var w [8]byte
	if err := in.Fabric.Setup(0).Read(w[:], r.Base); err != nil {
		t.Fatal(err)
	}
	return int(binary.LittleEndian.Uint64(w[:])&63) + 1
}
