package dolphin

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
)

// The cache stays within Env.CacheBytes, caches nothing with a budget of
// 0, and either way every key is found.
func TestCacheBudget(t *testing.T) {
	for _, budget := range []uint64{0, 8 << 10, 4 << 20} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			cfg := indextest.Config(transport.ModePaper, 1)
			in := indextest.New(t, "dolphin", nil, indextest.Options{Config: cfg, CacheBytes: budget})
			x := in.Index.(*Index)
			if budget == 0 { // Options read 0 as the default budget
				for _, c := range x.caches {
					c.budget = 0
				}
			}
			const n = 20000
			if err := x.BulkLoad(in.Fabric.Setup(x.firstCN), indextest.Pairs(n, denseKey, denseKey)); err != nil {
				t.Fatal(err)
			}
			in.Fabric.Go(x.firstCN+1, 0, func(ep transport.Endpoint) {
				c := x.NewClient(ep)
				for i := uint64(0); i < n; i += 7 {
					v, ok, err := c.Search(denseKey(i))
					if err != nil || !ok || !bytes.Equal(v, denseKey(i)) {
						t.Errorf("search %d = %x, %v, %v", i, v, ok, err)
						return
					}
				}
			})
			if err := in.Fabric.Run(); err != nil {
				t.Fatal(err)
			}
			used := x.caches[1].bytes()
			switch {
			case budget == 0 && used != 0:
				t.Errorf("budget 0: %d bytes cached", used)
			case used > budget:
				t.Errorf("%d bytes cached over a budget of %d", used, budget)
			case budget > 0 && used == 0:
				t.Errorf("budget %d: nothing cached", budget)
			}
			if info := x.Info(); info.MemoryBytes < n/uint64(x.l.span)*uint64(x.l.leafBytes) {
				t.Errorf("MemoryBytes %d below the leaves' %d", info.MemoryBytes, n/uint64(x.l.span)*uint64(x.l.leafBytes))
			}
		})
	}
}

// Values over 64 bytes carry cacheline versions: concurrent updates of one
// key never let a search see a value mixed from two writes.
func TestCachelineVersions(t *testing.T) {
	cfg := indextest.Config(transport.ModePaper, 1)
	in := indextest.New(t, "dolphin", map[string]string{"combine": "false"}, indextest.Options{Config: cfg, ValueSize: 150})
	x := in.Index.(*Index)
	if x.l.valLines != 3 {
		t.Fatalf("a 150-byte value takes %d cachelines, want 3", x.l.valLines)
	}
	fill := func(b byte) []byte { return bytes.Repeat([]byte{b}, 150) }
	key := denseKey(42)
	if err := x.BulkLoad(in.Fabric.Setup(x.firstCN), indextest.Pairs(100, denseKey, func(uint64) []byte { return fill(1) })); err != nil {
		t.Fatal(err)
	}
	done := 0 // sim clients run one at a time
	for w := range 4 {
		in.Fabric.Go(x.firstCN+transport.NodeID(w%3), w/3, func(ep transport.Endpoint) {
			c := x.NewClient(ep)
			for i := range 60 {
				if err := c.Update(key, fill(byte(2+w*60+i))); err != nil {
					t.Error(err)
					return
				}
				v, ok, err := c.Search(key)
				if err != nil || !ok || !bytes.Equal(v, fill(v[0])) {
					t.Errorf("search = %x, %v, %v: not one write's value", v, ok, err)
					return
				}
				done++
			}
		})
	}
	if err := in.Fabric.Run(); err != nil {
		t.Fatal(err)
	}
	if done != 4*60 {
		t.Errorf("%d updates and searches checked, want %d", done, 4*60)
	}
}
