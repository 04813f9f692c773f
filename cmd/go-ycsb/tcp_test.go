package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmbench/dmbench/transport/tcp"
)

// TestLoadThenRunOnTCP runs go-ycsb load and then go-ycsb run as separate
// processes against one memory node of the tcp fabric (served by this
// test, as dmbench memnode would): the run attaches to the index the load
// published, does not load again, and finds every record; a run of
// another index against the same memory is refused, naming what it holds.
func TestLoadThenRunOnTCP(t *testing.T) {
	key := []byte("go-ycsb tcp test key")
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
	srv, err := tcp.NewServer(tcp.ServerConfig{Key: key, Cores: 1, Capacity: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	addr, err := srv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	props := func(index string) []string {
		return []string{index, "-P", filepath.Join(stockWorkloads(t), "workloada"), "-p", "recordcount=2000", "-p", "operationcount=2000",
			"-p", "dm.fabric=tcp", "-p", "dm.memnodes=" + addr, "-p", "dm.key=" + keyFile, "--threads", "4"}
	}
	load := mustRun(t, append([]string{"load"}, props("sherman")...)...)
	if n := ycsbCount(t, load, "INSERT"); n != 2000 {
		t.Fatalf("load: INSERT count %d, want 2000\n%s", n, load)
	}
	out := mustRun(t, append([]string{"run"}, props("sherman")...)...)
	if !strings.Contains(out, "Using the sherman index the memory nodes "+addr+" hold") || strings.Contains(out, "Preloaded") {
		t.Errorf("run did not attach to the loaded index\n%s", out)
	}
	if n := ycsbCount(t, out, "READ") + ycsbCount(t, out, "UPDATE"); n != 2000 || strings.Contains(out, "_ERROR ") {
		t.Errorf("run: %d reads and updates, want 2000 and none failed\n%s", n, out)
	}
	if !strings.Contains(out, "sherman on the tcp fabric (memory nodes "+addr+")") {
		t.Errorf("run: the report does not name the tcp fabric\n%s", out)
	}
	stdout, stderr, code := goYCSB(t, "", append([]string{"run"}, props("dmtree")...)...)
	if code == 0 || !strings.Contains(stderr, "attaching to dmtree: the memory nodes hold index sherman") {
		t.Errorf("run of dmtree on sherman's memory: exit %d, want an error naming what the memory holds\nstderr: %s\nstdout: %s", code, stderr, stdout)
	}
}
