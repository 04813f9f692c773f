package tcp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/dmbench/dmbench/transport"
)

// rawConn is a hand-driven client connection: frames go out as built and
// come back undecoded, as a buggy or hostile peer would see them.
type rawConn struct {
	t  *testing.T
	c  net.Conn
	fr *frameReader
}

// dialRaw connects to addr and says hello with a proof of key.
func dialRaw(t *testing.T, addr string, key []byte) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(20 * time.Second))
	t.Cleanup(func() { c.Close() })
	r := &rawConn{t: t, c: c, fr: newFrameReader(c)}
	typ, _, nonce, err := r.fr.next()
	if err != nil || typ != frameChallenge {
		t.Fatalf("challenge: type %d, %v", typ, err)
	}
	h := hello{version: protocolVersion, node: 0}
	copy(h.mac[:], mac(key, nonce))
	r.send(appendHello(nil, 0, &h))
	return r
}

func (r *rawConn) send(frame []byte) {
	r.t.Helper()
	if _, err := r.c.Write(frame); err != nil {
		r.t.Fatalf("send: %v", err)
	}
}

// expect reads the next frame, which must have type typ and id id.
func (r *rawConn) expect(typ byte, id uint64) []byte {
	r.t.Helper()
	got, gotID, p, err := r.fr.next()
	if err != nil {
		r.t.Fatalf("waiting for frame type %d (request %d): %v", typ, id, err)
	}
	if got != typ || gotID != id {
		msg := ""
		if got == frameError {
			e, _ := decodeError(p)
			msg = e.Error()
		}
		r.t.Fatalf("got frame type %d for request %d %s, want type %d for request %d", got, gotID, msg, typ, id)
	}
	return bytes.Clone(p)
}

// expectError reads an error frame for request id whose text holds every
// one of want.
func (r *rawConn) expectError(id uint64, want ...string) error {
	r.t.Helper()
	e, err := decodeError(r.expect(frameError, id))
	if err != nil {
		r.t.Fatalf("error frame: %v", err)
	}
	for _, w := range want {
		if !strings.Contains(e.Error(), w) {
			r.t.Errorf("error %q does not name %q", e, w)
		}
	}
	return e
}

// TestMalformedAccess sends a server bad accesses, bad frames and a wrong
// key: each gets an error frame naming what was wrong, no memory outside
// the request's region changes, and the server goes on serving.
func TestMalformedAccess(t *testing.T) {
	key := []byte("the cluster key of this test")
	srv, err := NewServer(ServerConfig{Key: key, Cores: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if err := srv.Configure(0, transport.ModeStrict, 1<<16, 4096, true, true); err != nil {
		t.Fatal(err)
	}
	addr, err := srv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := dialRaw(t, addr, key)
	r.expect(frameWelcome, 0)
	main := transport.GAddr(transport.RegionAlign)
	end := main.Add(1 << 16)

	// Good traffic first, to compare against afterwards.
	r.send(appendBatch(nil, 1, []transport.Op{transport.WriteOp(end.Add(^uint64(7)), []byte("lastword"))}))
	r.expect(frameBatchReply, 1)

	bad := []struct {
		name string
		ops  []transport.Op
		want []string
	}{
		{"read outside every region", []transport.Op{transport.ReadOp(make([]byte, 8), transport.Addr(0, 1<<30))}, []string{"0:0x40000000", "outside every region"}},
		{"read of another node's address", []transport.Op{transport.ReadOp(make([]byte, 8), transport.Addr(3, transport.RegionAlign))}, []string{"3:0x1000", "outside every region of node 3"}},
		{"write past the end of main", []transport.Op{transport.WriteOp(end.Add(^uint64(3)), []byte("overflow"))}, []string{"write of 8 bytes", "runs past the end", `"main"`}},
		{"unaligned FAA", []transport.Op{transport.FAAOp(main.Add(4), 1)}, []string{"faa", "0:0x1004", "not 8-byte aligned"}},
		{"unaligned CAS in the device region", []transport.Op{transport.CASOp(transport.Addr(0, 0x11000+2), 0, 1)}, []string{"cas", "0:0x11002", `"device"`}},
		{"nil address", []transport.Op{transport.ReadOp(make([]byte, 1), 0)}, []string{"nil address"}},
		{"good write then a bad read in one batch", []transport.Op{
			transport.WriteOp(main, []byte("must not land")),
			transport.ReadOp(make([]byte, 8), end.Add(^uint64(3))),
		}, []string{"batch op 1 of 2", "0:0x10ffc"}},
	}
	for i, b := range bad {
		id := uint64(100 + i)
		r.send(appendBatch(nil, id, b.ops))
		err := r.expectError(id, b.want...)
		var ae *transport.AddrError
		if !errors.As(err, &ae) {
			t.Errorf("%s: error %v is not an AddrError", b.name, err)
		}
	}

	frames := []struct {
		name  string
		frame []byte
		want  []string
	}{
		{"unknown frame type", func() []byte { b, s := beginFrame(nil, 99, 200); return endFrame(b, s) }(), []string{"unknown frame type 99"}},
		{"batch cut short", func() []byte {
			f := appendBatch(nil, 201, []transport.Op{transport.CASOp(main, 0, 1)})
			f = f[:len(f)-3]
			binary.LittleEndian.PutUint32(f, uint32(len(f)-lenBytes))
			return f
		}(), []string{"malformed frame", "op 0 of 1"}},
		{"verb that cannot be posted", func() []byte {
			f := appendBatch(nil, 202, []transport.Op{transport.ReadOp(make([]byte, 8), main)})
			f[lenBytes+headerBytes+4] = byte(transport.VerbRPC)
			return f
		}(), []string{"rpc", "cannot be posted"}},
		{"batch of a billion ops", func() []byte {
			b, s := beginFrame(nil, frameBatch, 203)
			return endFrame(binary.LittleEndian.AppendUint32(b, 1e9), s)
		}(), []string{"1000000000 ops"}},
		{"call of an unregistered method", appendCall(nil, 204, 0x4242, nil), []string{"0x4242", "no handler"}},
		{"second hello", appendHello(nil, 205, &hello{version: protocolVersion}), []string{"second hello"}},
		{"region too big for the server", appendAddRegion(nil, 206, "huge", 1<<50), []string{`"huge"`}},
	}
	for _, f := range frames {
		r.send(f.frame)
		r.expectError(binary.LittleEndian.Uint64(f.frame[lenBytes+1:]), f.want...)
	}

	// Nothing outside the good write changed, and the connection serves.
	r.send(appendBatch(nil, 300, []transport.Op{transport.ReadOp(make([]byte, 13), main), transport.ReadOp(make([]byte, 8), end.Add(^uint64(7)))}))
	if got := r.expect(frameBatchReply, 300); !bytes.Equal(got, append(make([]byte, 13), "lastword"...)) {
		t.Errorf("after the bad requests memory reads %q", got)
	}

	t.Run("wrong key", func(t *testing.T) {
		w := dialRaw(t, addr, []byte("not the key"))
		w.expectError(0, "cluster key does not match")
		if _, _, _, err := w.fr.next(); err == nil {
			t.Error("the connection with the wrong key stays open")
		}
	})
	t.Run("frame longer than the limit", func(t *testing.T) {
		w := dialRaw(t, addr, key)
		w.expect(frameWelcome, 0)
		w.send(binary.LittleEndian.AppendUint32(nil, MaxFrame+1))
		w.expectError(0, "67108865")
		if _, _, _, err := w.fr.next(); err == nil {
			t.Error("the connection that sent an oversized frame stays open")
		}
	})
	t.Run("fabric client after all that", func(t *testing.T) {
		p := &peer{node: 0, addr: addr}
		c, wel, err := dial(p, key, hello{node: 0})
		if err != nil {
			t.Fatal(err)
		}
		defer c.close()
		if len(wel.regions) != 2 || wel.regions[1].Name != "device" {
			t.Errorf("welcome lists regions %v", wel.regions)
		}
		p.conns = []*clientConn{c}
		cl := newCall()
		cl.ops = []transport.Op{transport.ReadOp(make([]byte, 8), end.Add(^uint64(7)))}
		if err := c.roundTrip(cl, func(b []byte, id uint64) []byte { return appendBatch(b, id, cl.ops) }); err != nil || string(cl.ops[0].Buf) != "lastword" {
			t.Errorf("read by a good client: %q, %v", cl.ops[0].Buf, err)
		}
	})
}
