package fabrictest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dmbench/dmbench/transport"
)

// The methods testRPC registers.
const (
	methodEcho  uint16 = 1 // reply = req
	methodFail  uint16 = 2 // error "refused <req>"
	methodPeek  uint16 = 3 // req = addr, length; reply = the bytes the handler reads there
	methodWhere uint16 = 4 // reply = the handler endpoint's node
	methodBusy  uint16 = 5 // counts the handlers running at once
	// methodUnknown is registered nowhere.
	methodUnknown uint16 = 0x1234
)

func echo(_ transport.Endpoint, req []byte) ([]byte, error) { return bytes.Clone(req), nil }

func refuse(_ transport.Endpoint, req []byte) ([]byte, error) {
	return nil, fmt.Errorf("refused %s", req)
}

// peek reads memory on behalf of the caller with the handler's endpoint.
func peek(ep transport.Endpoint, req []byte) ([]byte, error) {
	if len(req) != 16 {
		return nil, fmt.Errorf("peek request of %d bytes, want 16", len(req))
	}
	a := transport.GAddr(binary.LittleEndian.Uint64(req))
	out := make([]byte, binary.LittleEndian.Uint64(req[8:]))
	if err := ep.Read(out, a); err != nil {
		return nil, err
	}
	return out, nil
}

func where(ep transport.Endpoint, _ []byte) ([]byte, error) {
	return binary.LittleEndian.AppendUint16(nil, uint16(ep.Node())), nil
}

// busyHandler records the most handlers seen running at once.
type busyHandler struct{ running, most atomic.Int64 }

func (b *busyHandler) serve(ep transport.Endpoint, req []byte) ([]byte, error) {
	n := b.running.Add(1)
	for {
		m := b.most.Load()
		if n <= m || b.most.CompareAndSwap(m, n) {
			break
		}
	}
	// Work, verbs and yields give other callers the chance to arrive
	// meanwhile, in virtual time and in real time alike.
	var err error
	for range 20 {
		ep.Compute(100)
		if err = ep.Read(make([]byte, 8), transport.GAddr(binary.LittleEndian.Uint64(req))); err != nil {
			break
		}
		runtime.Gosched()
	}
	b.running.Add(-1)
	return nil, err
}

// testRPC checks two-sided calls to handlers on a memory and a compute node.
func testRPC(t *testing.T, s suite) {
	cfg := s.config()
	f := s.build(t, cfg)
	c0, c1 := cfg.ComputeNodeIDs()[0], cfg.ComputeNodeIDs()[1]
	servers := []transport.NodeID{0, c1}
	busy := make([]*busyHandler, len(servers))
	for i, n := range servers {
		busy[i] = new(busyHandler)
		f.Handle(n, methodEcho, echo)
		f.Handle(n, methodFail, refuse)
		f.Handle(n, methodPeek, peek)
		f.Handle(n, methodWhere, where)
		f.Handle(n, methodBusy, busy[i].serve)
	}
	served := []transport.GAddr{scratch(t, f, 0), region(t, f, c1, "main").Base.Add(512)}

	for i, n := range servers {
		t.Run(fmt.Sprintf("node %d", n), func(t *testing.T) {
			f.Go(c0, 0, func(ep transport.Endpoint) { checkCalls(t, ep, n, served[i]) })
			run(t, f)
		})
	}

	t.Run("bad calls", func(t *testing.T) {
		f.Go(c0, 1, func(ep transport.Endpoint) {
			_, err := ep.Call(0, methodUnknown, []byte("x"))
			if err == nil {
				t.Error("call of an unregistered method succeeded")
			} else if msg := err.Error(); !strings.Contains(msg, "0x1234") && !strings.Contains(msg, "4660") {
				t.Errorf("error for unregistered method 0x1234 does not name it: %v", err)
			}
			_, err = ep.Call(999, methodEcho, []byte("x"))
			if err == nil {
				t.Error("call to node 999 succeeded")
			} else if !strings.Contains(err.Error(), "999") {
				t.Errorf("error for node 999 does not name it: %v", err)
			}
		})
		run(t, f)
	})

	t.Run("handlers per node at most its cores", func(t *testing.T) {
		for _, n := range cfg.ComputeNodeIDs() {
			for th := range cfg.Threads {
				for k := range 3 {
					f.Go(n, th, func(ep transport.Endpoint) {
						for i := range 10 {
							target := servers[(k+i)%len(servers)]
							a := served[(k+i)%len(servers)]
							_, err := ep.Call(target, methodBusy, binary.LittleEndian.AppendUint64(nil, uint64(a)))
							ok(t, err, "busy call to node %d", target)
						}
					})
				}
			}
		}
		run(t, f)
		for i, n := range servers {
			if most, cores := busy[i].most.Load(), cfg.Cores(n); most > int64(cores) || most < 1 {
				t.Errorf("node %d with %d cores ran %d handlers at once", n, cores, most)
			}
		}
	})
}

// checkCalls makes the good calls to node n, whose memory at a its
// handlers read.
func checkCalls(t *testing.T, ep transport.Endpoint, n transport.NodeID, a transport.GAddr) {
	var first []byte
	for _, req := range [][]byte{[]byte("hello"), {}, bytes.Repeat([]byte{0xab}, 4096)} {
		reply, err := ep.Call(n, methodEcho, req)
		if ok(t, err, "echo of %d bytes", len(req)) && !bytes.Equal(reply, req) {
			t.Errorf("echo of %d bytes returned %d bytes that differ", len(req), len(reply))
		}
		if first == nil {
			first = reply
		}
	}
	// A reply is the caller's: later calls leave it as it was.
	if string(first) != "hello" {
		t.Errorf("the first echo's reply became %q after later calls", first)
	}

	_, err := ep.Call(n, methodFail, []byte("politely"))
	if err == nil || !strings.Contains(err.Error(), "refused politely") {
		t.Errorf("failing handler: got error %v, want one containing %q", err, "refused politely")
	}

	reply, err := ep.Call(n, methodWhere, nil)
	if ok(t, err, "where") && (len(reply) != 2 || transport.NodeID(binary.LittleEndian.Uint16(reply)) != n) {
		t.Errorf("handler on node %d runs on an endpoint of node %x", n, reply)
	}

	data := []byte("the handler reads the memory it serves")
	if !ok(t, ep.Write(a, data), "write %v", a) {
		return
	}
	req := binary.LittleEndian.AppendUint64(nil, uint64(a))
	req = binary.LittleEndian.AppendUint64(req, uint64(len(data)))
	reply, err = ep.Call(n, methodPeek, req)
	if ok(t, err, "peek") && !bytes.Equal(reply, data) {
		t.Errorf("handler on node %d read %q at %v, want %q", n, reply, a, data)
	}
	req = binary.LittleEndian.AppendUint64(nil, 0)
	req = binary.LittleEndian.AppendUint64(req, 8)
	var ae *transport.AddrError
	if _, err := ep.Call(n, methodPeek, req); !errors.As(err, &ae) {
		t.Errorf("handler's READ of nil: got %v, want the handler's *transport.AddrError wrapped", err)
	}
}
