package tcp_test

import (
	"encoding/binary"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/tcp"
)

// TestComputeNodesInProcesses builds two fabrics, each running one of two
// compute nodes as a process of its own would (Options.Compute), with an
// address exchange standing in for the rendezvous: a region one adds to
// its compute node is found by the other, which then reads what was
// written there; clients may run only on the process's own compute node.
func TestComputeNodesInProcesses(t *testing.T) {
	key := []byte("process test key")
	cfg := remoteConfig()
	cfg.ComputeNodes = 2
	addrs := memNodes(t, cfg.MemoryNodes, cfg.MemoryCores, key)
	ids := cfg.ComputeNodeIDs()

	// The exchange: each side hands in its address and waits for the other.
	var mu sync.Mutex
	got := make([]string, len(ids))
	var arrived sync.WaitGroup
	arrived.Add(len(ids))
	// The first process asks the memory nodes for fresh memory; the other
	// connects once it has, keeping that memory, as bench's runProcess
	// orders them.
	fresh := make(chan struct{})
	peers := func(own map[transport.NodeID]string) ([]string, error) {
		mu.Lock()
		first := false
		for n, a := range own {
			got[n-ids[0]] = a
			first = n == ids[0]
		}
		mu.Unlock()
		arrived.Done()
		arrived.Wait()
		if !first {
			<-fresh
		}
		return got, nil
	}
	fabrics := make([]*tcp.Fabric, len(ids))
	errs := make([]error, len(ids))
	var built sync.WaitGroup
	for i, n := range ids {
		built.Add(1)
		go func() {
			defer built.Done()
			fabrics[i], errs[i] = tcp.New(cfg, tcp.Options{MemNodes: addrs, Key: key, Keep: i > 0,
				Compute: []transport.NodeID{n}, Peers: peers})
			if i == 0 {
				close(fresh)
			}
		}()
	}
	built.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for _, f := range fabrics {
		t.Cleanup(func() { f.Close() })
	}
	a, b := fabrics[0], fabrics[1]
	rg, err := b.AddRegion(ids[1], "tables", 4096)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Setup(ids[1]).Write(rg.Base, binary.LittleEndian.AppendUint64(nil, 42)); err != nil {
		t.Fatal(err)
	}
	seen, err := a.Region(ids[1], "tables")
	if err != nil || seen != rg {
		t.Fatalf("the other process's view of region tables: %+v, %v; want %+v", seen, err, rg)
	}
	var w [8]byte
	if err := a.Setup(ids[0]).Read(w[:], seen.Base); err != nil || binary.LittleEndian.Uint64(w[:]) != 42 {
		t.Errorf("reading the other compute node's region: %d, %v; want 42", binary.LittleEndian.Uint64(w[:]), err)
	}
	a.Go(ids[1], 0, func(transport.Endpoint) {})
	if err := a.Run(); err == nil || !strings.Contains(err.Error(), "runs in another process") {
		t.Errorf("a client on the other process's compute node: %v, want an error saying where it runs", err)
	}
}
