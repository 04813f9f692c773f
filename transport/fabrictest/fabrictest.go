package fabrictest

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/dmbench/dmbench/transport"
)

// Run runs the whole suite, once per memory mode, against the fabrics
// newFabric builds. newFabric must return a fabric for cfg or fail t.
func Run(t *testing.T, newFabric func(t *testing.T, cfg transport.Config) transport.Fabric) {
	for _, mode := range []transport.Mode{transport.ModePaper, transport.ModeStrict} {
		t.Run(mode.String(), func(t *testing.T) {
			s := suite{newFabric: newFabric, mode: mode}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) { c.run(t, s) })
			}
		})
	}
}

var cases = []struct {
	name string
	run  func(*testing.T, suite)
}{
	{"Cluster", testCluster},
	{"ReadWrite", testReadWrite},
	{"Atomics", testAtomics},
	{"Post", testPost},
	{"AddrErrors", testAddrErrors},
	{"RPC", testRPC},
	{"Mutex", testMutex},
	{"RWMutex", testRWMutex},
	{"Gate", testGate},
	{"Allocator", testAllocator},
	{"Stats", testStats},
	{"Panic", testPanic},
	{"Setup", testSetup},
}

// suite carries what every case needs: the constructor and the mode.
type suite struct {
	newFabric func(t *testing.T, cfg transport.Config) transport.Fabric
	mode      transport.Mode
}

// config is the usual small cluster: memory nodes 0 and 1 (4 MiB main and
// 64 KiB device each), compute nodes 2 and 3 (256 KiB main, 2 threads).
func (s suite) config() transport.Config {
	return transport.Config{
		ComputeNodes: 2,
		MemoryNodes:  2,
		Threads:      2,
		MemoryCores:  2,
		ComputeCores: 1,
		MemoryBytes:  4 << 20,
		ComputeBytes: 256 << 10,
		DeviceBytes:  64 << 10,
		Mode:         s.mode,
		Seed:         42,
	}
}

// build makes a fabric for cfg in the suite's mode and closes it when the
// test ends.
func (s suite) build(t *testing.T, cfg transport.Config) transport.Fabric {
	t.Helper()
	cfg.Mode = s.mode
	f := s.newFabric(t, cfg)
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return f
}

// run runs the clients added since the last run and fails t if Run does.
func run(t *testing.T, f transport.Fabric) {
	t.Helper()
	if err := f.Run(); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// region looks up a region that must exist.
func region(t *testing.T, f transport.Fabric, n transport.NodeID, name string) transport.Region {
	t.Helper()
	r, err := f.Region(n, name)
	if err != nil {
		t.Fatalf("Region(%d, %q): %v", n, name, err)
	}
	return r
}

// scratch is the first address of memory node n's main region that an
// index could use: past the reserved MetaBytes.
func scratch(t *testing.T, f transport.Fabric, n transport.NodeID) transport.GAddr {
	t.Helper()
	return region(t, f, n, "main").Base.Add(transport.MetaBytes)
}

// ok reports a non-nil err from inside a client, where t.Fatal must not be
// called, and says whether err was nil.
func ok(t *testing.T, err error, format string, args ...any) bool {
	t.Helper()
	if err != nil {
		t.Errorf("%s: %v", fmt.Sprintf(format, args...), err)
		return false
	}
	return true
}

// word is v as the 8 little-endian bytes memory holds.
func word(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

// readWord reads the 8-byte word at a.
func readWord(t *testing.T, ep transport.Endpoint, a transport.GAddr) (uint64, bool) {
	t.Helper()
	var b [8]byte
	if !ok(t, ep.Read(b[:], a), "read word at %v", a) {
		return 0, false
	}
	return binary.LittleEndian.Uint64(b[:]), true
}

// writeWord writes v to the 8-byte word at a.
func writeWord(t *testing.T, ep transport.Endpoint, a transport.GAddr, v uint64) bool {
	t.Helper()
	return ok(t, ep.Write(a, word(v)), "write word at %v", a)
}
