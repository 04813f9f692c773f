package dolphin

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
)

// denseKey is the paper's benchmark key: the record number, big-endian.
func denseKey(i uint64) []byte { return binary.BigEndian.AppendUint64(nil, i) }

// roundTrips counts an endpoint's blocking calls per tag: each verb or
// doorbell batch is one round trip.
type roundTrips struct {
	transport.Endpoint
	n *[transport.MaxTags]int
}

func (r roundTrips) count() { r.n[r.Tag()]++ }
func (r roundTrips) Read(dst []byte, src transport.GAddr) error {
	r.count()
	return r.Endpoint.Read(dst, src)
}
func (r roundTrips) Write(dst transport.GAddr, src []byte) error {
	r.count()
	return r.Endpoint.Write(dst, src)
}
func (r roundTrips) CAS(a transport.GAddr, e, s uint64) (uint64, error) {
	r.count()
	return r.Endpoint.CAS(a, e, s)
}
func (r roundTrips) FAA(a transport.GAddr, add uint64) (uint64, error) {
	r.count()
	return r.Endpoint.FAA(a, add)
}
func (r roundTrips) Post(ops ...transport.Op) error {
	r.count()
	return r.Endpoint.Post(ops...)
}

// Golden verb counts on a warm cache: the sequences doc.go lists.
func TestVerbsPerOperation(t *testing.T) {
	cfg := transport.Config{ComputeNodes: 1, MemoryNodes: 1, Threads: 1, MemoryCores: 1, ComputeCores: 1, MemoryBytes: 64 << 20}
	f, err := sim.New(cfg, sim.CX6)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	x := indextest.Build(t, "dolphin", indexes.Env{Fabric: f, KeySize: 8, ValueSize: 8, CacheBytes: 4 << 20}, nil).(*Index)
	if err := x.BulkLoad(f.Setup(1), indextest.Pairs(2000, func(i uint64) []byte { return denseKey(2 * i) }, denseKey)); err != nil {
		t.Fatal(err)
	}
	l := &x.l
	leafRead := uint64(l.leafBytes)
	keysRead := uint64(l.valsOff)
	var rtts [transport.MaxTags]int
	type op struct {
		name string
		do   func(c indexes.Client) error
		rtt  int
		want transport.Counters
	}
	counts := func(kv ...uint64) transport.Counters {
		var c transport.Counters
		for i := 0; i < len(kv); i += 4 {
			c[kv[i]] = transport.VerbCount{Count: kv[i+1], BytesOut: kv[i+2], BytesIn: kv[i+3]}
		}
		return c
	}
	const (
		read  = uint64(transport.VerbRead)
		write = uint64(transport.VerbWrite)
		cas   = uint64(transport.VerbCAS)
		faa   = uint64(transport.VerbFAA)
	)
	ops := []op{
		{"search", func(c indexes.Client) error {
			v, ok, err := c.Search(denseKey(200))
			if err == nil && (!ok || string(v) != string(denseKey(100))) {
				err = fmt.Errorf("search = %x, %v", v, ok)
			}
			return err
		}, 1, counts(read, 1, 0, leafRead)},
		{"update", func(c indexes.Client) error { return c.Update(denseKey(202), denseKey(7)) },
			2, counts(faa, 2, 16, 16, read, 1, 0, keysRead, write, 1, 8, 0)},
		{"insert", func(c indexes.Client) error { return c.Insert(denseKey(203), denseKey(9)) },
			3, counts(faa, 2, 16, 16, read, 1, 0, keysRead, cas, 1, 8, 8, write, 2, 16, 0)},
		{"delete", func(c indexes.Client) error { return c.Delete(denseKey(204)) },
			2, counts(faa, 2, 16, 16, read, 1, 0, keysRead, cas, 1, 8, 8)},
	}
	named := make([]indextest.Op[indexes.Client], len(ops))
	for i, o := range ops {
		named[i] = indextest.Op[indexes.Client]{Name: o.name, Do: o.do}
	}
	newClient := func(ep transport.Endpoint) indexes.Client { return x.NewClient(roundTrips{ep, &rtts}) }
	warm := func(c indexes.Client, _ transport.Endpoint) {
		for _, k := range []uint64{200, 202, 204} {
			if _, _, err := c.Search(denseKey(k)); err != nil {
				t.Error(err)
			}
		}
	}
	for i, got := range indextest.VerbsPerOp(t, f, 1, newClient, warm, named) {
		o := ops[i]
		if got != o.want {
			t.Errorf("%s: got %v, want %v", o.name, got, o.want)
		}
		if rtts[i+1] != o.rtt {
			t.Errorf("%s: %d round trips, want %d", o.name, rtts[i+1], o.rtt)
		}
	}
}
