package fabrictest

import (
	"cmp"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/dmbench/dmbench/transport"
)

// allocation is one block handed out by an Allocator.
type allocation struct {
	addr        transport.GAddr
	size, align uint64
}

// testAllocator has every client of every compute node allocate through
// its node's transport.Allocator at once, then checks the blocks.
func testAllocator(t *testing.T, s suite) {
	cfg := s.config()
	f := s.build(t, cfg)
	const chunk = 64 << 10

	t.Run("concurrent", func(t *testing.T) {
		const perClient, clientsPerThread = 30, 2
		aligns := []uint64{1, 8, 16, 64, 256, transport.RegionAlign}
		var mu sync.Mutex // guards got; never held across a verb
		var got []allocation
		perAllocator := make(map[*transport.Allocator][]transport.NodeID)
		for _, n := range cfg.ComputeNodeIDs() {
			al := transport.NewAllocator(f, chunk)
			for th := range cfg.Threads {
				for range clientsPerThread {
					f.Go(n, th, func(ep transport.Endpoint) {
						for range perClient {
							size := 1 + uint64(ep.Rand().IntN(3000))
							align := aligns[ep.Rand().IntN(len(aligns))]
							a, err := al.Alloc(ep, size, align)
							if !ok(t, err, "Alloc(%d, %d)", size, align) {
								return
							}
							mu.Lock()
							got = append(got, allocation{a, size, align})
							perAllocator[al] = append(perAllocator[al], a.Node())
							mu.Unlock()
						}
					})
				}
			}
		}
		run(t, f)
		if want := cfg.ComputeNodes * cfg.Threads * clientsPerThread * perClient; len(got) != want {
			t.Fatalf("%d allocations succeeded, want %d", len(got), want)
		}
		checkAllocations(t, f, got)
		// Alloc takes the next memory node under its lock, so every
		// allocator spreads its blocks evenly, whatever the interleaving.
		for _, nodes := range perAllocator {
			counts := make(map[transport.NodeID]int)
			for _, n := range nodes {
				counts[n]++
			}
			for _, n := range cfg.MemoryNodeIDs() {
				if counts[n] != len(nodes)/cfg.MemoryNodes {
					t.Errorf("an allocator placed %v of %d blocks per memory node, want an even split", counts, len(nodes))
				}
			}
		}
	})

	t.Run("round robin", func(t *testing.T) {
		al := transport.NewAllocator(f, chunk)
		f.Go(cfg.ComputeNodeIDs()[0], 0, func(ep transport.Endpoint) {
			for i := range 6 {
				a, err := al.Alloc(ep, 100, 8)
				if !ok(t, err, "Alloc") {
					return
				}
				if want := cfg.MemoryNodeIDs()[i%cfg.MemoryNodes]; a.Node() != want {
					t.Errorf("allocation %d on node %d, want %d", i, a.Node(), want)
				}
			}
		})
		run(t, f)
	})

	t.Run("out of memory", func(t *testing.T) {
		small := s.config()
		small.MemoryNodes, small.MemoryBytes = 1, 1<<20
		g := s.build(t, small)
		al := transport.NewAllocator(g, chunk)
		g.Go(small.ComputeNodeIDs()[0], 0, func(ep transport.Endpoint) {
			if _, err := al.Alloc(ep, 2<<20, 8); !errors.Is(err, transport.ErrOutOfMemory) {
				t.Errorf("Alloc of more than the node: got %v, want an error wrapping ErrOutOfMemory", err)
			}
			var served uint64
			for range 1000 {
				_, err := al.Alloc(ep, 32<<10, 8)
				if err != nil {
					if !errors.Is(err, transport.ErrOutOfMemory) {
						t.Errorf("Alloc on a full node: got %v, want an error wrapping ErrOutOfMemory", err)
					}
					break
				}
				served += 32 << 10
			}
			if limit := small.MemoryBytes - transport.MetaBytes; served == 0 || served > limit {
				t.Errorf("allocated %d bytes from a node with %d to give", served, limit)
			}
			if _, err := al.AllocOn(ep, small.ComputeNodeIDs()[0], 8, 8); err == nil {
				t.Error("AllocOn a compute node succeeded")
			}
		})
		run(t, g)
	})
}

// checkAllocations checks every block against the memory nodes' main
// regions and every pair of blocks for overlap.
func checkAllocations(t *testing.T, f transport.Fabric, got []allocation) {
	t.Helper()
	for _, a := range got {
		if uint64(a.addr)%a.align != 0 {
			t.Errorf("block %v is not %d-aligned", a.addr, a.align)
		}
		if f.Config().Role(a.addr.Node()) != transport.RoleMemory {
			t.Errorf("block %v is not on a memory node", a.addr)
			continue
		}
		main := region(t, f, a.addr.Node(), "main")
		if !main.Contains(a.addr, a.size) || a.addr < main.Base.Add(transport.MetaBytes) {
			t.Errorf("block [%v, +%d) is not in %v past its %d reserved bytes", a.addr, a.size, main, transport.MetaBytes)
		}
	}
	// Sorted by address, blocks overlap only if some block runs into the
	// next one, so one pass checks every pair.
	sorted := slices.SortedFunc(slices.Values(got), func(x, y allocation) int {
		return cmp.Compare(x.addr, y.addr)
	})
	for i := 1; i < len(sorted); i++ {
		if p, q := sorted[i-1], sorted[i]; p.addr.Add(p.size) > q.addr {
			t.Errorf("blocks [%v, +%d) and [%v, +%d) overlap", p.addr, p.size, q.addr, q.size)
		}
	}
}
