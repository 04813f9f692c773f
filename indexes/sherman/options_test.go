package sherman

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
)

// TestWideKeys runs the DMTree setup: 24-byte keys, 32-entry leaves
// (span), and larger values, through inserts, searches and a full scan.
func TestWideKeys(t *testing.T) {
	f := newFabric(t, "sim", cluster(1, 1, transport.ModePaper))
	x := indextest.Build(t, "sherman", indexes.Env{Fabric: f, KeySize: 24, ValueSize: 16, CacheBytes: 1 << 20}, map[string]string{"span": "32"}).(*Index)
	if x.l.leafCard != 32 || x.l.leafEntry != 24+16+2 {
		t.Fatalf("leaf of %d entries of %d bytes, want 32 of 42", x.l.leafCard, x.l.leafEntry)
	}
	k24 := func(i uint64) []byte { return binary.BigEndian.AppendUint64(make([]byte, 16), i) }
	v16 := func(i uint64) []byte { return binary.LittleEndian.AppendUint64(make([]byte, 8), i) }
	f.Go(2, 0, func(ep transport.Endpoint) {
		c := x.NewClient(ep)
		perm := rand.New(rand.NewPCG(1, 1)).Perm(3000)
		for _, i := range perm {
			if err := c.Insert(k24(uint64(i)), v16(uint64(i))); err != nil {
				t.Error(err)
				return
			}
		}
		for i := range uint64(3000) {
			got, ok, err := c.Search(k24(i))
			if err != nil || !ok || !bytes.Equal(got, v16(i)) {
				t.Errorf("search %d = %x, %v, %v", i, got, ok, err)
				return
			}
		}
		next := uint64(0)
		err := c.Scan(k24(0), 5000, func(k, v []byte) bool {
			if !bytes.Equal(k, k24(next)) || !bytes.Equal(v, v16(next)) {
				t.Errorf("scan entry %d: %x=%x", next, k, v)
			}
			next++
			return true
		})
		if err != nil || next != 3000 {
			t.Errorf("scan: %d entries, %v", next, err)
		}
	})
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
}

// TestOptions runs the concurrent workload with the ablations Sherman's
// evaluation switches off one by one: no HOCL, locks in host memory, and
// the unlock WRITE posted after the node's instead of with it.
func TestOptions(t *testing.T) {
	for _, opts := range []map[string]string{
		{"hocl": "false"},
		{"onchip": "false"},
		{"combine": "false"},
		{"handover": "0", "consistency": "optlock"},
	} {
		t.Run(fmt.Sprint(opts), func(t *testing.T) {
			f := newFabric(t, "sim", cluster(3, 2, transport.ModePaper))
			opts["node_bytes"] = "256"
			x := build(t, f, opts, 1<<20, nil)
			if opts["onchip"] == "false" && x.locks[0].device {
				t.Fatal("onchip=false left the lock table in device memory")
			}
			concurrent(t, f, x, 2, 400/scale, nil)
		})
	}
}

// TestBadInput checks the errors for a misconfigured or misused index.
func TestBadInput(t *testing.T) {
	f := newFabric(t, "sim", cluster(2, 1, transport.ModePaper))
	spec, err := indexes.Lookup("sherman")
	if err != nil {
		t.Fatal(err)
	}
	env := indexes.Env{Fabric: f, KeySize: 8, ValueSize: 8}
	if _, err := spec.Build(env, map[string]string{"partitioned": "true"}); err == nil {
		t.Error("partitioned=true without Env.Partitions built")
	}
	if _, err := spec.Build(env, map[string]string{"consistency": "magic"}); err == nil {
		t.Error("consistency=magic built")
	}
	if _, err := spec.Build(env, map[string]string{"consistency": "crc", "optcheck": "dex"}); err == nil {
		t.Error("optcheck=dex without consistency=optlock built")
	}
	env.KeySize = 200
	if _, err := spec.Build(env, map[string]string{"node_bytes": "256"}); err == nil {
		t.Error("200-byte keys in 256-byte nodes built")
	}
	x := build(t, f, map[string]string{"partitioned": "true"}, 0, [][]byte{key(0), key(100)})
	f.Go(2, 0, func(ep transport.Endpoint) {
		c := x.NewClient(ep)
		if err := c.Insert(key(500), val(1)); err == nil {
			t.Error("an insert into another compute node's partition succeeded")
		}
		if err := c.Insert(key(5)[:4], val(1)); err == nil {
			t.Error("an insert of a 4-byte key succeeded")
		}
		if err := c.Insert(key(5), val(1)[:3]); err == nil {
			t.Error("an insert of a 3-byte value succeeded")
		}
	})
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
}
