package fabrictest

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/dmbench/dmbench/transport"
)

// testReadWrite round-trips bytes at unaligned offsets and lengths to every
// kind of region, and checks that the bytes around each WRITE survive it.
func testReadWrite(t *testing.T, s suite) {
	cfg := s.config()
	f := s.build(t, cfg)
	c0, c1 := cfg.ComputeNodeIDs()[0], cfg.ComputeNodeIDs()[1]
	peer, err := f.AddRegion(c1, "peer", 64<<10)
	if err != nil {
		t.Fatalf("AddRegion: %v", err)
	}
	targets := []struct {
		name string
		base transport.GAddr
	}{
		{"memory node 0", scratch(t, f, 0)},
		{"memory node 1", scratch(t, f, 1)},
		{"device region", region(t, f, 1, "device").Base},
		{"compute node region", peer.Base},
		{"own node", region(t, f, c0, "main").Base},
	}
	offsets := []uint64{0, 1, 3, 7, 8, 13, 60, 63, 64, 101}
	lengths := []int{1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 56, 63, 64, 65, 127, 128, 129, 199, 200}
	const window = 512 // bytes around each access that must keep their value

	for i, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			f.Go(c0, i%cfg.Threads, func(ep transport.Endpoint) {
				rng := rand.New(rand.NewPCG(7, uint64(i)))
				background := randomBytes(rng, window)
				for _, off := range offsets {
					for _, n := range lengths {
						if !roundTrip(t, ep, rng, tg.base, background, off, n) {
							return
						}
					}
				}
			})
			run(t, f)
		})
	}

	t.Run("visible to other nodes", func(t *testing.T) {
		data := []byte("written by one compute node, read by another")
		mem := scratch(t, f, 0).Add(4096)
		f.Go(c0, 0, func(ep transport.Endpoint) {
			ok(t, ep.Write(mem, data), "write memory node")
			ok(t, ep.Write(peer.Base.Add(4096+3), data), "write compute node region")
		})
		run(t, f)
		f.Go(c1, 1, func(ep transport.Endpoint) {
			for _, a := range []transport.GAddr{mem, peer.Base.Add(4096 + 3)} {
				got := make([]byte, len(data))
				if ok(t, ep.Read(got, a), "read %v", a) && !bytes.Equal(got, data) {
					t.Errorf("node %d read %q at %v, want %q", ep.Node(), got, a, data)
				}
			}
		})
		run(t, f)
	})
}

// roundTrip fills window bytes at base with background, writes n random
// bytes at base+off, and reads back both the whole window and exactly the
// written bytes.
func roundTrip(t *testing.T, ep transport.Endpoint, rng *rand.Rand, base transport.GAddr, background []byte, off uint64, n int) bool {
	data := randomBytes(rng, n)
	if !ok(t, ep.Write(base, background), "write background at %v", base) ||
		!ok(t, ep.Write(base.Add(off), data), "write %d bytes at +%d", n, off) {
		return false
	}
	want := bytes.Clone(background)
	copy(want[off:], data)
	got := make([]byte, len(background))
	if !ok(t, ep.Read(got, base), "read window at %v", base) {
		return false
	}
	if !bytes.Equal(got, want) {
		t.Errorf("after writing %d bytes at %v+%d, the window reads\n%x\nwant\n%x", n, base, off, got, want)
		return false
	}
	exact := make([]byte, n)
	if !ok(t, ep.Read(exact, base.Add(off)), "read %d bytes at +%d", n, off) {
		return false
	}
	if !bytes.Equal(exact, data) {
		t.Errorf("read %d bytes at %v+%d = %x, want %x", n, base, off, exact, data)
		return false
	}
	return true
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}
