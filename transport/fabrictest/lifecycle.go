package fabrictest

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/dmbench/dmbench/transport"
)

// testPanic checks that a panicking client fails Run with its panic value
// and that the fabric runs later clients normally.
func testPanic(t *testing.T, s suite) {
	cfg := s.config()
	f := s.build(t, cfg)
	c := cfg.ComputeNodeIDs()[0]
	a := scratch(t, f, 0)
	const value = "fabrictest: deliberate panic 4711"
	f.Go(c, 0, func(transport.Endpoint) { panic(value) })
	f.Go(c, 1, func(ep transport.Endpoint) { writeWord(t, ep, a, 1) })
	err := f.Run()
	if err == nil || !strings.Contains(err.Error(), value) {
		t.Fatalf("Run with a panicking client returned %v, want an error containing %q", err, value)
	}
	f.Go(c, 0, func(ep transport.Endpoint) {
		writeWord(t, ep, a, 2)
		if v, _ := readWord(t, ep, a); v != 2 {
			t.Errorf("after a failed run, a client reads %d where it wrote 2", v)
		}
	})
	run(t, f)
}

// testSetup checks that Setup endpoints apply verbs and RPCs at once, and
// that clients and Setup endpoints see each other's writes across runs.
func testSetup(t *testing.T, s suite) {
	cfg := s.config()
	f := s.build(t, cfg)
	c0, c1 := cfg.ComputeNodeIDs()[0], cfg.ComputeNodeIDs()[1]
	f.Handle(0, methodEcho, echo)
	f.Handle(c1, methodEcho, echo)
	f.Handle(0, methodPeek, peek)
	a := scratch(t, f, 0)
	w := a.Add(1024)
	data := []byte("written by a Setup endpoint")

	mem, comp := f.Setup(0), f.Setup(c0)
	if mem.Node() != 0 || comp.Node() != c0 {
		t.Errorf("Setup(0) on node %d, Setup(%d) on node %d", mem.Node(), c0, comp.Node())
	}
	mustOK := func(err error, what string) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	mustOK(mem.Write(a, data), "write")
	got := make([]byte, len(data))
	mustOK(comp.Read(got, a), "read")
	if !bytes.Equal(got, data) {
		t.Errorf("Setup endpoint of node %d read %q right after a Setup write of %q", c0, got, data)
	}
	old, err := comp.CAS(w, 0, 5)
	mustOK(err, "CAS")
	if old != 0 {
		t.Errorf("CAS returned %d, want 0", old)
	}
	old, err = mem.FAA(w, 1)
	mustOK(err, "FAA")
	if old != 5 {
		t.Errorf("FAA after CAS returned %d, want 5", old)
	}
	old, err = comp.MaskedCAS(w, 6, 0x100, 0xff, 0xf00)
	mustOK(err, "masked CAS")
	if old != 6 {
		t.Errorf("masked CAS returned %d, want 6", old)
	}
	ops := []transport.Op{transport.FAAOp(w, 1), transport.ReadOp(make([]byte, 8), w)}
	mustOK(comp.Post(ops...), "Post")
	if ops[0].Old != 0x106 || !bytes.Equal(ops[1].Buf, word(0x107)) {
		t.Errorf("batch: FAA returned %#x and READ %x, want 0x106 and %x", ops[0].Old, ops[1].Buf, word(0x107))
	}
	for _, n := range []transport.NodeID{0, c1} {
		reply, err := comp.Call(n, methodEcho, data)
		mustOK(err, "Setup call")
		if !bytes.Equal(reply, data) {
			t.Errorf("Setup call to node %d echoed %q, want %q", n, reply, data)
		}
	}
	req := binary.LittleEndian.AppendUint64(nil, uint64(a))
	reply, err := comp.Call(0, methodPeek, binary.LittleEndian.AppendUint64(req, uint64(len(data))))
	mustOK(err, "Setup call of a handler that reads memory")
	if !bytes.Equal(reply, data) {
		t.Errorf("handler called through Setup read %q, want %q", reply, data)
	}
	blk, err := transport.NewAllocator(f, 64<<10).Alloc(comp, 64, 64)
	mustOK(err, "Alloc through a Setup endpoint")
	mustOK(comp.Write(blk, data), "write allocated block")

	f.Go(c1, 0, func(ep transport.Endpoint) {
		got := make([]byte, len(data))
		if ok(t, ep.Read(got, blk), "read") && !bytes.Equal(got, data) {
			t.Errorf("client read %q where Setup wrote %q", got, data)
		}
		ok(t, ep.Write(a, []byte("client")), "write")
	})
	run(t, f)
	got = make([]byte, 6)
	mustOK(mem.Read(got, a), "read")
	if string(got) != "client" {
		t.Errorf("Setup endpoint read %q after the run, where a client wrote %q", got, "client")
	}
}
