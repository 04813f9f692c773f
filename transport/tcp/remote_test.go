package tcp_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/fabrictest"
	"github.com/dmbench/dmbench/transport/tcp"
)

// memNodes starts n servers as dmbench memnode does: no layout until a
// fabric's hello gives one, the chunk allocator their only handler.
func memNodes(t *testing.T, n, cores int, key []byte) []string {
	t.Helper()
	var addrs []string
	for range n {
		srv, err := tcp.NewServer(tcp.ServerConfig{Key: key, Capacity: 64 << 20, Cores: cores})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		addr, err := srv.Listen("127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, addr)
	}
	return addrs
}

func remoteConfig() transport.Config {
	return transport.Config{ComputeNodes: 1, MemoryNodes: 2, Threads: 2, MemoryCores: 2, ComputeCores: 1,
		MemoryBytes: 4 << 20, DeviceBytes: 64 << 10, Seed: 1}
}

// TestRemoteMemoryNodes drives memory nodes started on their own: a
// fabric lays them out, allocates from their chunk servers and reads and
// writes them; the next fabric gets fresh memory unless it keeps it; a
// wrong key, a wrong core count, a layout beyond the server's capacity
// and a handler registered for such a node are refused with errors
// naming them.
func TestRemoteMemoryNodes(t *testing.T) {
	key := []byte("remote test key")
	addrs := memNodes(t, 2, 2, key)
	cfg := remoteConfig()
	build := func(opt tcp.Options) (*tcp.Fabric, error) {
		opt.MemNodes, opt.Key = addrs, key
		return tcp.New(cfg, opt)
	}

	f, err := build(tcp.Options{Conns: 2})
	if err != nil {
		t.Fatal(err)
	}
	var blk transport.GAddr
	data := []byte("kept across fabrics")
	f.Go(2, 0, func(ep transport.Endpoint) {
		al := transport.NewAllocator(f, 64<<10)
		if blk, err = al.AllocOn(ep, 1, 64, 8); err != nil {
			t.Errorf("Alloc: %v", err)
			return
		}
		if err := ep.Write(blk, data); err != nil {
			t.Errorf("write: %v", err)
		}
		if _, err := al.Alloc(ep, 8<<20, 8); !errors.Is(err, transport.ErrOutOfMemory) {
			t.Errorf("Alloc beyond the node: %v, want ErrOutOfMemory through the wire", err)
		}
	})
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
	// Node 1 handed out a chunk; node 0, first in the round robin, had
	// no room: a call that reached its handler counts, its reply only
	// when it succeeds.
	st := f.Stats()
	for n, want := range []transport.VerbCount{{Count: 1, BytesOut: 8}, {Count: 1, BytesOut: 8, BytesIn: 8}} {
		if got := st.Verbs.ByNode[n][transport.VerbRPC]; got != want || st.Nodes[n].RPCs != 1 {
			t.Errorf("node %d: RPCs counted %+v, served %d; want %+v, 1", n, got, st.Nodes[n].RPCs, want)
		}
	}
	f.Close()

	read := func(f *tcp.Fabric) []byte {
		got := make([]byte, len(data))
		if err := f.Setup(1).Read(got, blk); err != nil {
			t.Fatal(err)
		}
		return got
	}
	kept, err := build(tcp.Options{Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := read(kept); !bytes.Equal(got, data) {
		t.Errorf("a fabric keeping the memory reads %q, want %q", got, data)
	}
	kept.Close()
	fresh, err := build(tcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := read(fresh); !bytes.Equal(got, make([]byte, len(data))) {
		t.Errorf("a fabric on fresh memory reads %q, want zeros", got)
	}
	// An attached endpoint, as the go-ycsb binary's threads use, counts
	// once detached.
	ep, detach, err := fresh.Attach(2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := ep.Write(blk, data); err != nil {
		t.Fatal(err)
	}
	detach()
	if got := fresh.Stats().Verbs.ByNode[1][transport.VerbWrite]; got != (transport.VerbCount{Count: 1, BytesOut: uint64(len(data))}) {
		t.Errorf("attached WRITE counted as %+v", got)
	}
	fresh.Handle(0, 7, func(transport.Endpoint, []byte) ([]byte, error) { return nil, nil })
	fresh.Go(2, 0, func(transport.Endpoint) {})
	if err := fresh.Run(); err == nil || !strings.Contains(err.Error(), "0x0007") {
		t.Errorf("Run after Handle on a remote memory node: %v, want an error naming method 0x0007", err)
	}
	fresh.Close()

	refusals := []struct {
		name string
		cfg  func(*transport.Config)
		opt  tcp.Options
		want string
	}{
		{"wrong key", nil, tcp.Options{Key: []byte("nope")}, "cluster key does not match"},
		{"wrong cores", func(c *transport.Config) { c.MemoryCores = 3 }, tcp.Options{}, "--cores 3"},
		{"beyond capacity", func(c *transport.Config) { c.MemoryBytes = 1 << 30 }, tcp.Options{}, "at most 67108864 bytes"},
		{"too few addresses", func(c *transport.Config) { c.MemoryNodes = 3 }, tcp.Options{}, "2 memory-node addresses"},
	}
	for _, r := range refusals {
		c := remoteConfig()
		if r.cfg != nil {
			r.cfg(&c)
		}
		opt := r.opt
		opt.MemNodes = addrs
		if opt.Key == nil {
			opt.Key = key
		}
		f, err := tcp.New(c, opt)
		if err == nil {
			f.Close()
			t.Errorf("%s: New succeeded", r.name)
		} else if !strings.Contains(err.Error(), r.want) {
			t.Errorf("%s: %v, want it to say %q", r.name, err, r.want)
		}
	}
}

// TestRemoteSemantics runs the fabric semantics suite's cases that need
// no handler on memory nodes against memory nodes started on their own.
func TestRemoteSemantics(t *testing.T) {
	key := []byte("remote semantics key")
	fabrictest.Run(t, func(t *testing.T, cfg transport.Config) transport.Fabric {
		if strings.Contains(t.Name(), "/RPC") || strings.Contains(t.Name(), "/Stats") || strings.Contains(t.Name(), "/Setup") {
			t.Skip("registers handlers on memory nodes, which run only the chunk allocator in a process of their own")
		}
		f, err := tcp.New(cfg, tcp.Options{MemNodes: memNodes(t, cfg.MemoryNodes, cfg.MemoryCores, key), Key: key})
		if err != nil {
			t.Fatal(err)
		}
		return f
	})
}

// TestMemoryNodeLost stops a memory node's server under a running
// client: its verbs fail with an error naming the node and its address,
// and Run returns.
func TestMemoryNodeLost(t *testing.T) {
	key := []byte("lost node key")
	srv, err := tcp.NewServer(tcp.ServerConfig{Key: key, Cores: 1})
	if err != nil {
		t.Fatal(err)
	}
	addr, err := srv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := transport.Config{ComputeNodes: 1, MemoryNodes: 1, Threads: 1, MemoryCores: 1, ComputeCores: 1, MemoryBytes: 1 << 20}
	f, err := tcp.New(cfg, tcp.Options{MemNodes: []string{addr}, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	main, err := f.Region(0, "main")
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	var last error
	f.Go(1, 0, func(ep transport.Endpoint) {
		buf := make([]byte, 8)
		for i := 0; i < 1e7 && last == nil; i++ {
			last = ep.Read(buf, main.Base)
			if i == 10 {
				close(started)
			}
		}
	})
	go func() {
		<-started
		srv.Close()
	}()
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
	if last == nil || !strings.Contains(last.Error(), "node 0 at "+addr) || !strings.Contains(last.Error(), "connection lost") {
		t.Errorf("READ from a stopped memory node: %v, want an error naming node 0 at %s and the lost connection", last, addr)
	}
}
