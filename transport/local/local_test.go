package local_test

import (
	"testing"

	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/fabrictest"
	"github.com/dmbench/dmbench/transport/local"
)

func newFabric(t *testing.T, cfg transport.Config) transport.Fabric {
	t.Helper()
	f, err := local.New(cfg)
	if err != nil {
		t.Fatalf("local.New: %v", err)
	}
	return f
}

func TestSemantics(t *testing.T) {
	fabrictest.Run(t, newFabric)
}

func TestNewRejectsBadConfig(t *testing.T) {
	if _, err := local.New(transport.Config{}); err == nil {
		t.Error("New of an empty config succeeded")
	}
}

// TestGoOnBadThread checks that a client added where no thread exists
// fails the next Run, and only that one.
func TestGoOnBadThread(t *testing.T) {
	f := newFabric(t, transport.Config{ComputeNodes: 1, MemoryNodes: 1, Threads: 1, MemoryCores: 1, ComputeCores: 1, MemoryBytes: 1 << 20})
	defer f.Close()
	ran := false
	f.Go(1, 0, func(transport.Endpoint) { ran = true })
	f.Go(1, 1, func(transport.Endpoint) {})
	f.Go(0, 0, func(transport.Endpoint) {})
	if err := f.Run(); err == nil {
		t.Fatal("Run after Go on thread 1 of 1 and on a memory node succeeded")
	}
	if ran {
		t.Error("a run with a bad client ran the good ones")
	}
	if err := f.Run(); err != nil {
		t.Errorf("the run after a failed one: %v", err)
	}
}

// TestLargeRegionsAreCheap builds memory nodes of several GiB: the OS
// hands out zeroed pages lazily, so only the touched ones cost memory.
func TestLargeRegionsAreCheap(t *testing.T) {
	f, err := local.New(transport.Config{MemoryNodes: 2, MemoryCores: 1, MemoryBytes: 4 << 30})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := f.Region(1, "main")
	if err != nil {
		t.Fatal(err)
	}
	ep := f.Setup(1)
	last := r.End().Add(^uint64(7))
	if _, err := ep.FAA(last, 3); err != nil {
		t.Fatal(err)
	}
	if old, err := ep.FAA(last, 0); err != nil || old != 3 {
		t.Errorf("last word of a 4 GiB region = %d, %v; want 3", old, err)
	}
}

// An attached endpoint works from the caller's own goroutine and its verbs
// reach Stats once detached.
func TestAttach(t *testing.T) {
	f, err := local.New(transport.Config{ComputeNodes: 1, MemoryNodes: 1, Threads: 2, MemoryCores: 1, ComputeCores: 1, MemoryBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, _, err := f.Attach(0, 0); err == nil {
		t.Error("Attach on a memory node succeeded")
	}
	ep, detach, err := f.Attach(1, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := f.Region(0, "main")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- ep.Write(m.Base, []byte("attached")) }()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	detach()
	st := f.Stats()
	if got := st.Verbs.ByNode[0][transport.VerbWrite]; got.Count != 1 || got.BytesOut != 8 {
		t.Errorf("attached WRITE counted as %+v, want 1 verb of 8 bytes", got)
	}
}
