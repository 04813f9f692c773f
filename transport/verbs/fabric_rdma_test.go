//go:build linux && cgo && rdma

package verbs

import (
	"bytes"
	"errors"
	"testing"

	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/tcp"
)

var testConfig = transport.Config{ComputeNodes: 1, MemoryNodes: 1, Threads: 1, MemoryCores: 1, ComputeCores: 1, MemoryBytes: 1 << 20}

// needDevice skips a test on hosts without an RDMA device, with the reason.
func needDevice(t *testing.T) *hca {
	t.Helper()
	h, err := openHCA(HCAOptions{})
	if err != nil {
		t.Skipf("needs an RDMA device: %v", err)
	}
	return h
}

// On a host without a device (this project's CI), New fails with the one
// error that names the other fabrics.
func TestNewWithoutDevice(t *testing.T) {
	if h, err := openHCA(HCAOptions{}); err == nil {
		h.close()
		t.Skip("this host has an RDMA device")
	}
	f, err := New(testConfig, Options{})
	if !errors.Is(err, ErrNoDevice) || f != nil {
		t.Fatalf("New = %v, %v; want ErrNoDevice", f, err)
	}
}

// fakeMemory is one node's memory for a Responder without a server.
type fakeMemory struct {
	layout transport.Layout
	bufs   [][]byte
}

func (m *fakeMemory) Layout() transport.Layout { return m.layout }
func (m *fakeMemory) RegionBytes(i int) []byte { return m.bufs[i] }

// TestLoopbackVerbs connects a client QP to a responder on the same
// device and runs every verb; the control plane is a tcp fabric on
// loopback whose layout the responder's fake memory copies.
func TestLoopbackVerbs(t *testing.T) {
	h := needDevice(t)
	defer h.close()
	tf, err := tcp.New(testConfig, tcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tf.Close()
	main, err := tf.Region(0, "main")
	if err != nil {
		t.Fatal(err)
	}
	buf, err := allocPinned(int(main.Size))
	if err != nil {
		t.Fatal(err)
	}
	defer freePinned(buf)
	mem := &fakeMemory{layout: transport.Layout{Node: 0, Regions: tf.Regions(0)}, bufs: [][]byte{buf}}
	r, err := NewResponder(HCAOptions{}, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	f := &Fabric{tcp: tf, h: h}
	compute := testConfig.ComputeNodeIDs()[0]
	e := &endpoint{Endpoint: tf.Setup(compute), f: f, tcpDetach: func() {}}
	defer e.close()
	if e.cq, err = h.newCQ(maxWR + 1); err != nil {
		t.Fatal(err)
	}
	sb, err := allocPinned(stageBytes)
	if err != nil {
		t.Fatal(err)
	}
	if e.stage, err = h.register(sb, false); err != nil {
		t.Fatal(err)
	}
	q, err := h.newQP(e.cq, 0)
	if err != nil {
		t.Fatal(err)
	}
	e.qps = append(e.qps, q)
	reply, err := r.Handler()(nil, ConnectRequest{From: compute, QP: q.info()}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := DecodeConnectReply(reply)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.connect(rep.QP); err != nil {
		t.Fatal(err)
	}
	e.layouts, e.remote = []transport.Layout{mem.layout}, [][]RemoteRegion{rep.Regions}
	e.makeLists(1)

	a := main.Base.Add(64)
	data := bytes.Repeat([]byte{0xab}, 300<<10) // longer than the staging buffer
	if err := e.Write(a, data); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(data))
	if err := e.Read(got, a); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("READ after WRITE: err %v, equal %v", err, bytes.Equal(got, data))
	}
	w := main.Base.Add(8)
	if old, err := e.CAS(w, 0, 5); err != nil || old != 0 {
		t.Fatalf("CAS = %d, %v; want 0", old, err)
	}
	if old, err := e.FAA(w, 2); err != nil || old != 5 {
		t.Fatalf("FAA = %d, %v; want 5", old, err)
	}
	if old, err := e.MaskedCAS(w, 0, 0x100, 0x100, 0x100); err != nil || old != 7 {
		t.Fatalf("masked CAS = %#x, %v; want 7", old, err)
	}
	ops := []transport.Op{transport.FAAOp(w, 1), transport.ReadOp(make([]byte, 8), w)}
	if err := e.Post(ops...); err != nil || ops[0].Old != 0x107 {
		t.Fatalf("Post: %v, FAA old %#x; want 0x107", err, ops[0].Old)
	}
	c := e.stats.Total()
	// WRITE 1, READ 1 + 1 (masked CAS) + 1 (batch), CAS 1 + 1 (masked CAS), FAA 1 + 1.
	if c[transport.VerbRead].Count != 3 || c[transport.VerbCAS].Count != 2 || c[transport.VerbFAA].Count != 2 || c[transport.VerbMaskedCAS].Count != 0 {
		t.Errorf("counted %v", c)
	}
}
