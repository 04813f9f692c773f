package fabrictest

import (
	"errors"
	"testing"

	"github.com/dmbench/dmbench/transport"
)

// Tags the stats test attributes verbs to.
const (
	tagSearch transport.Tag = 1
	tagInsert transport.Tag = 2
	tagScan   transport.Tag = 3
)

// testStats checks the counters per tag and node, doorbells, what Setup
// and failed verbs leave out, ResetStats and counting over several runs.
func testStats(t *testing.T, s suite) {
	cfg := s.config()
	cfg.ComputeNodes, cfg.Threads = 1, 1
	f := s.build(t, cfg)
	c := cfg.ComputeNodeIDs()[0]
	f.Handle(0, methodEcho, echo)
	a0, a1 := scratch(t, f, 0), scratch(t, f, 1)
	w0, w1 := a0.Add(1024), a1.Add(1024)

	setup := f.Setup(c)
	if err := setup.Write(a0, make([]byte, 256)); err != nil {
		t.Fatalf("setup write: %v", err)
	}
	if _, err := setup.Call(0, methodEcho, []byte("setup")); err != nil {
		t.Fatalf("setup call: %v", err)
	}
	f.ResetStats()

	f.Go(c, 0, func(ep transport.Endpoint) {
		ep.SetTag(tagSearch)
		ok(t, ep.Read(make([]byte, 100), a0), "read")
		ok(t, ep.Write(a1, make([]byte, 30)), "write")
		var ae *transport.AddrError
		if err := ep.Read(make([]byte, 8), 0); !errors.As(err, &ae) {
			t.Errorf("read of nil: %v", err)
		}
		ep.SetTag(tagInsert)
		if ep.Tag() != tagInsert {
			t.Errorf("Tag = %d after SetTag(%d)", ep.Tag(), tagInsert)
		}
		_, err := ep.CAS(w0, 0, 1)
		ok(t, err, "CAS")
		_, err = ep.MaskedCAS(w0, 1, 2, 3, 3)
		ok(t, err, "masked CAS")
		_, err = ep.FAA(w1, 1)
		ok(t, err, "FAA")
		ok(t, ep.Post(
			transport.ReadOp(make([]byte, 10), a0),
			transport.WriteOp(a1, make([]byte, 20)),
			transport.FAAOp(w0, 1),
		), "Post")
		_, err = ep.Call(0, methodEcho, []byte("12345"))
		ok(t, err, "Call")
	})
	run(t, f)

	st := f.Stats()
	type vc = transport.VerbCount
	want := map[transport.Tag]map[transport.VerbKind]vc{
		tagSearch: {
			transport.VerbRead:  {Count: 1, BytesIn: 100},
			transport.VerbWrite: {Count: 1, BytesOut: 30},
		},
		tagInsert: {
			transport.VerbRead:      {Count: 1, BytesIn: 10},
			transport.VerbWrite:     {Count: 1, BytesOut: 20},
			transport.VerbCAS:       {Count: 1, BytesOut: 8, BytesIn: 8},
			transport.VerbMaskedCAS: {Count: 1, BytesOut: 8, BytesIn: 8},
			transport.VerbFAA:       {Count: 2, BytesOut: 16, BytesIn: 16},
			transport.VerbRPC:       {Count: 1, BytesOut: 5, BytesIn: 5},
		},
	}
	for tag := range transport.Tag(transport.MaxTags) {
		for v := range transport.NumVerbKinds {
			if got := st.Verbs.ByTag[tag][v]; got != want[tag][v] {
				t.Errorf("tag %d %s: %+v, want %+v", tag, v, got, want[tag][v])
			}
		}
	}
	wantNode := map[transport.NodeID]map[transport.VerbKind]vc{
		0: {
			transport.VerbRead:      {Count: 2, BytesIn: 110},
			transport.VerbCAS:       {Count: 1, BytesOut: 8, BytesIn: 8},
			transport.VerbMaskedCAS: {Count: 1, BytesOut: 8, BytesIn: 8},
			transport.VerbFAA:       {Count: 1, BytesOut: 8, BytesIn: 8},
			transport.VerbRPC:       {Count: 1, BytesOut: 5, BytesIn: 5},
		},
		1: {
			transport.VerbWrite: {Count: 2, BytesOut: 50},
			transport.VerbFAA:   {Count: 1, BytesOut: 8, BytesIn: 8},
		},
	}
	for n := range transport.NodeID(cfg.NodeCount()) {
		for v := range transport.NumVerbKinds {
			var got vc
			if int(n) < len(st.Verbs.ByNode) {
				got = st.Verbs.ByNode[n][v]
			}
			if got != wantNode[n][v] {
				t.Errorf("node %d %s: %+v, want %+v", n, v, got, wantNode[n][v])
			}
		}
	}
	// Seven doorbells: five single verbs, one Post, one Call.
	if st.Verbs.Doorbells != 7 {
		t.Errorf("Doorbells = %d, want 7", st.Verbs.Doorbells)
	}
	checkNodeStats(t, cfg, st, wantNode)

	f.ResetStats()
	if _, err := setup.FAA(w0, 1); err != nil {
		t.Fatalf("setup FAA: %v", err)
	}
	st = f.Stats()
	if tot := st.Verbs.Total(); tot.Verbs() != 0 || tot.Bytes() != 0 || st.Verbs.Doorbells != 0 {
		t.Errorf("after ResetStats and a Setup verb: %d verbs, %d bytes, %d doorbells, want none", tot.Verbs(), tot.Bytes(), st.Verbs.Doorbells)
	}
	for _, ns := range st.Nodes {
		if ns.Msgs != 0 || ns.RPCs != 0 || ns.BytesTx != 0 || ns.BytesRx != 0 {
			t.Errorf("after ResetStats node %d: %+v, want no traffic", ns.ID, ns)
		}
	}

	f.Go(c, 0, func(ep transport.Endpoint) {
		ep.SetTag(tagScan)
		ok(t, ep.Read(make([]byte, 16), a1), "read")
	})
	run(t, f)
	st = f.Stats()
	if got, tot := st.Verbs.ByTag[tagScan][transport.VerbRead], st.Verbs.Total(); got != (vc{Count: 1, BytesIn: 16}) || tot.Verbs() != 1 || st.Verbs.Doorbells != 1 {
		t.Errorf("second run: tag %d read %+v of %d verbs and %d doorbells, want one 16-byte read and one doorbell", tagScan, got, tot.Verbs(), st.Verbs.Doorbells)
	}
}

// checkNodeStats checks the per-node view of the run in testStats, whose
// one compute node sent every verb in wantNode.
func checkNodeStats(t *testing.T, cfg transport.Config, st transport.Stats, wantNode map[transport.NodeID]map[transport.VerbKind]transport.VerbCount) {
	t.Helper()
	if st.WindowNs <= 0 {
		t.Errorf("WindowNs = %d after a run, want it positive", st.WindowNs)
	}
	if len(st.Nodes) != cfg.NodeCount() {
		t.Fatalf("Stats has %d nodes, want %d", len(st.Nodes), cfg.NodeCount())
	}
	var sent, received uint64 // payload of the compute node
	for i, ns := range st.Nodes {
		n := transport.NodeID(i)
		threads := 0
		if cfg.Role(n) == transport.RoleCompute {
			threads = cfg.Threads
		}
		if ns.ID != n || ns.Cores != cfg.Cores(n) || ns.Threads != threads {
			t.Errorf("node %d: id %d, %d cores, %d threads; want %d, %d, %d", i, ns.ID, ns.Cores, ns.Threads, n, cfg.Cores(n), threads)
		}
		var out, in, rpcs uint64
		for v, c := range wantNode[n] {
			out, in = out+c.BytesOut, in+c.BytesIn
			if v == transport.VerbRPC {
				rpcs += c.Count
			}
		}
		sent, received = sent+out, received+in
		if ns.RPCs != rpcs {
			t.Errorf("node %d served %d RPCs, want %d", n, ns.RPCs, rpcs)
		}
		if cfg.Role(n) == transport.RoleMemory && (ns.Msgs == 0 || ns.BytesRx < out || ns.BytesTx < in) {
			t.Errorf("node %d: %d messages, %d bytes received, %d sent; want messages and at least %d received, %d sent", n, ns.Msgs, ns.BytesRx, ns.BytesTx, out, in)
		}
	}
	c := st.Nodes[cfg.ComputeNodeIDs()[0]]
	if c.Msgs == 0 || c.BytesTx < sent || c.BytesRx < received {
		t.Errorf("compute node: %d messages, %d bytes sent, %d received; want messages and at least %d sent, %d received", c.Msgs, c.BytesTx, c.BytesRx, sent, received)
	}
}
