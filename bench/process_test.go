package bench

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dmbench/dmbench/indexes"
	_ "github.com/dmbench/dmbench/indexes/dex"
	_ "github.com/dmbench/dmbench/indexes/dlsm"
	_ "github.com/dmbench/dmbench/indexes/sherman"
	"github.com/dmbench/dmbench/transport/rendezvous"
	"github.com/dmbench/dmbench/transport/tcp"
	"github.com/dmbench/dmbench/workloads"
)

// cluster starts a memory node's server and a rendezvous in this test
// process, as dmbench memnode --rendezvous does in its own.
func cluster(t *testing.T, key []byte) (memnode, rv string) {
	t.Helper()
	srv, err := tcp.NewServer(tcp.ServerConfig{Key: key, Cores: 1, Capacity: 1 << 30, Install: indexes.Offloads})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	memnode, err = srv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r, err := rendezvous.NewServer("127.0.0.1:0", key)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return memnode, r.Addr()
}

func processConfig(t *testing.T, memnode, rv string, key []byte) Config {
	c := smallConfig(t, "dmtree-search-only", nil)
	c.Index, c.Fabric, c.Threads, c.Coroutines = "sherman", "tcp", 2, 2
	c.MemoryBytes = 256 << 20
	c.MemNodes, c.ClusterKey = []string{memnode}, key
	c.Process = &Process{Rendezvous: rv, Listen: "127.0.0.1:0", Wait: time.Minute}
	return c
}

// runProcesses runs c as its compute-node processes would, each Run on
// a goroutine of its own with a fabric and an index instance of its own,
// and returns their results.
func runProcesses(t *testing.T, c Config) []*Result {
	t.Helper()
	results := make([]*Result, c.ComputeNodes)
	errs := make([]error, c.ComputeNodes)
	var wg sync.WaitGroup
	for i := range c.ComputeNodes {
		wg.Add(1)
		go func() { defer wg.Done(); results[i], errs[i] = Run(c) }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return results
}

// TestComputeNodeProcesses runs each compute node on a fabric and an
// index instance of its own, meeting at the rendezvous as processes do,
// and checks that every one returns the whole run's result, with the verbs
// per operation of the same run in one process: Sherman searches with a
// warm cache are one READ each, wherever their clients run.
func TestComputeNodeProcesses(t *testing.T) {
	key := []byte("test cluster key")
	memnode, rv := cluster(t, key)
	c := processConfig(t, memnode, rv, key)
	results := runProcesses(t, c)
	one := c
	one.Process, one.MemNodes, one.ClusterKey = nil, nil, nil
	want, err := Run(one)
	if err != nil {
		t.Fatal(err)
	}
	for i, res := range results {
		if res.Ops != want.Ops || res.VerbsPerOp["READ"] != want.VerbsPerOp["READ"] || res.BytesPerOp["READ"] != want.BytesPerOp["READ"] {
			t.Errorf("process %d: %d ops, READ verbs %+v, bytes %+v; one process: %d ops, %+v, %+v",
				i, res.Ops, res.VerbsPerOp["READ"], res.BytesPerOp["READ"], want.Ops, want.VerbsPerOp["READ"], want.BytesPerOp["READ"])
		}
		if len(res.Failed) != 0 {
			t.Errorf("process %d: failed operations %v", i, res.Failed)
		}
		var compute int
		for _, n := range res.Nodes {
			if n.Role == "compute" && n.NICMops > 0 {
				compute++
			}
		}
		if compute != c.ComputeNodes {
			t.Errorf("process %d: %d compute nodes with traffic in %+v, want %d", i, compute, res.Nodes, c.ComputeNodes)
		}
	}
}

// TestComputeNodeFailureNamesIt has one of two compute nodes fail after
// joining: the other's run fails naming it and its reason, instead of
// waiting for it.
func TestComputeNodeFailureNamesIt(t *testing.T) {
	key := []byte("test cluster key")
	memnode, rv := cluster(t, key)
	c := processConfig(t, memnode, rv, key)
	done := make(chan error, 1)
	go func() { _, err := Run(c); done <- err }()
	other, err := rendezvous.Join(rv, key, c.digest(), c.ComputeNodes, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Abort(errors.New("memory node 0 at 198.18.0.1:7400: connection reset")); err != nil {
		t.Fatal(err)
	}
	err = <-done
	want := fmt.Sprintf("compute node %d failed: memory node 0 at 198.18.0.1:7400: connection reset", other.Position())
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("run beside a failed compute node: %v, want an error naming it", err)
	}
}

// TestOffloadOnMemoryNodeProcesses runs DEX, pushing every miss down, and
// dLSM, compacting, against a memory node in a server of its own, as
// dmbench memnode serves it, with the compute nodes in processes of their
// own: the memory node runs their handlers, which the compute node that
// built each index installed, and serves their RPCs.
func TestOffloadOnMemoryNodeProcesses(t *testing.T) {
	key := []byte("test cluster key")
	for _, tc := range []struct {
		index, workload string
		params          map[string]string
	}{
		{"dex", "dex-write-intensive", map[string]string{"offload": "always", "partitioning": "true"}},
		{"dlsm", "dmtree-insert-only", nil},
	} {
		t.Run(tc.index, func(t *testing.T) {
			memnode, rv := cluster(t, key)
			c := processConfig(t, memnode, rv, key)
			w, err := workloads.Builtin(tc.workload, workloads.Properties{"recordcount": "20000", "operationcount": "20000", "warmupoperationcount": "0"})
			if err != nil {
				t.Fatal(err)
			}
			c.Index, c.Params, c.Workload = tc.index, tc.params, w
			res := runProcesses(t, c)[0]
			if rpcs := res.Nodes[0].RPCs; rpcs == 0 {
				t.Errorf("memory node served no RPCs: %+v", res.Nodes)
			}
			if len(res.Failed) != 0 {
				t.Errorf("failed operations %v", res.Failed)
			}
		})
	}
}
