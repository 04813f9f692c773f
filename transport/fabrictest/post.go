package fabrictest

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/dmbench/dmbench/transport"
)

// testPost checks doorbell batches: order of execution, atomics' old values
// and batches longer than the per-QP limit on outstanding READs/atomics.
func testPost(t *testing.T, s suite) {
	cfg := s.config()
	f := s.build(t, cfg)
	c := cfg.ComputeNodeIDs()[0]

	t.Run("mixed batch in order", func(t *testing.T) {
		a, b := scratch(t, f, 0), scratch(t, f, 1)
		w := a.Add(1024)
		data := []byte("a WRITE then a READ of the same bytes in one batch: the READ sees the WRITE....")
		f.Go(c, 0, func(ep transport.Endpoint) {
			echo := make([]byte, len(data))
			afterAtomics := make([]byte, 8)
			other := make([]byte, 24)
			ops := []transport.Op{
				transport.WriteOp(a.Add(3), data),
				transport.ReadOp(echo, a.Add(3)),
				transport.WriteOp(w, word(10)),
				transport.CASOp(w, 10, 20),
				transport.CASOp(w, 10, 30),
				transport.FAAOp(w, 5),
				transport.MaskedCASOp(w, 25, 0xf00, 0xff, 0xf00),
				transport.ReadOp(afterAtomics, w),
				transport.WriteOp(b.Add(5), data[:17]),
				transport.ReadOp(other, b),
			}
			if !ok(t, ep.Post(ops...), "Post") {
				return
			}
			if !bytes.Equal(echo, data) {
				t.Errorf("READ after WRITE in one batch got %q, want %q", echo, data)
			}
			for i, want := range map[int]uint64{3: 10, 4: 20, 5: 20, 6: 25} {
				if ops[i].Old != want {
					t.Errorf("ops[%d] (%s) Old = %d, want %d", i, ops[i].Kind, ops[i].Old, want)
				}
			}
			if got := binary.LittleEndian.Uint64(afterAtomics); got != 0xf19 {
				t.Errorf("word after CAS, failed CAS, FAA, masked CAS = %#x, want 0xf19", got)
			}
			if !bytes.Equal(other[5:22], data[:17]) {
				t.Errorf("READ of the other node in the batch got %q, want %q", other[5:22], data[:17])
			}
		})
		run(t, f)
	})

	t.Run("forty reads", func(t *testing.T) {
		const n, size = 40, 24
		addrs := make([]transport.GAddr, n)
		setup := f.Setup(c)
		for i := range addrs {
			// Spread the records over both memory nodes and a device region.
			switch i % 3 {
			case 0:
				addrs[i] = scratch(t, f, 0).Add(8192 + uint64(i)*size)
			case 1:
				addrs[i] = scratch(t, f, 1).Add(8192 + uint64(i)*size)
			default:
				addrs[i] = region(t, f, 1, "device").Base.Add(uint64(i) * size)
			}
			if err := setup.Write(addrs[i], record(i, size)); err != nil {
				t.Fatalf("setup write: %v", err)
			}
		}
		f.Go(c, 1, func(ep transport.Endpoint) {
			ops := make([]transport.Op, n)
			for i, a := range addrs {
				ops[i] = transport.ReadOp(make([]byte, size), a)
			}
			if !ok(t, ep.Post(ops...), "Post of %d READs", n) {
				return
			}
			for i := range ops {
				if want := record(i, size); !bytes.Equal(ops[i].Buf, want) {
					t.Errorf("READ %d of the batch got %x, want %x", i, ops[i].Buf, want)
				}
			}
		})
		run(t, f)
	})

	t.Run("forty atomics on one word", func(t *testing.T) {
		w := region(t, f, 0, "device").Base.Add(4096)
		f.Go(c, 0, func(ep transport.Endpoint) {
			ops := make([]transport.Op, 40)
			for i := range ops {
				ops[i] = transport.FAAOp(w, 1)
			}
			if !ok(t, ep.Post(ops...), "Post of 40 FAAs") {
				return
			}
			for i := range ops {
				if ops[i].Old != uint64(i) {
					t.Errorf("FAA %d of the batch returned %d, want %d (ops run in order)", i, ops[i].Old, i)
				}
			}
		})
		run(t, f)
	})
}

// record is the distinct content of record i.
func record(i, size int) []byte {
	b := make([]byte, size)
	for j := range b {
		b[j] = byte(i*size + j + 1)
	}
	return b
}
