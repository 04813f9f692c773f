package local_test

import (
	"bytes"
	"testing"

	"github.com/dmbench/dmbench/transport"
)

// lineRun has writers fill a span of cachelines, each line with one
// repeated byte, while readers read the span; check inspects each read.
func lineRun(t *testing.T, mode transport.Mode, check func(t *testing.T, span []byte)) {
	t.Helper()
	const (
		writers, readers = 2, 2
		lines            = 4
		rounds           = 2000
	)
	f := newFabric(t, transport.Config{
		ComputeNodes: 1, MemoryNodes: 1, Threads: writers + readers,
		MemoryCores: 1, ComputeCores: 1, MemoryBytes: 1 << 20, Mode: mode,
	})
	defer f.Close()
	r, err := f.Region(0, "main")
	if err != nil {
		t.Fatal(err)
	}
	span := r.Base.Add(transport.MetaBytes)
	for w := range writers {
		f.Go(1, w, func(ep transport.Endpoint) {
			buf := make([]byte, lines*transport.CachelineBytes)
			for i := range rounds {
				for l := range lines {
					// Distinct per writer, round and line, so a mix of two
					// writes is visible inside one line.
					v := byte(1 + (w*rounds+i+l)%255)
					copy(buf[l*transport.CachelineBytes:], bytes.Repeat([]byte{v}, transport.CachelineBytes))
				}
				if err := ep.Write(span, buf); err != nil {
					t.Errorf("write: %v", err)
					return
				}
			}
		})
	}
	for rd := range readers {
		f.Go(1, writers+rd, func(ep transport.Endpoint) {
			buf := make([]byte, lines*transport.CachelineBytes)
			for range rounds {
				if err := ep.Read(buf, span); err != nil {
					t.Errorf("read: %v", err)
					return
				}
				check(t, buf)
			}
		})
	}
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
}

// uniform reports whether every byte of each unit-sized piece of b is equal.
func uniform(b []byte, unit int) (int, bool) {
	for off := 0; off < len(b); off += unit {
		piece := b[off : off+unit]
		if bytes.Count(piece, piece[:1]) != unit {
			return off, false
		}
	}
	return 0, true
}

// TestPaperModeCachelinesAreAtomic: under ModePaper a READ never sees a
// cacheline that mixes two WRITEs.
func TestPaperModeCachelinesAreAtomic(t *testing.T) {
	lineRun(t, transport.ModePaper, func(t *testing.T, span []byte) {
		if off, ok := uniform(span, transport.CachelineBytes); !ok {
			t.Errorf("torn cacheline at +%d: %x", off, span[off:off+transport.CachelineBytes])
		}
	})
}

// TestStrictModeWordsAreAtomic: under ModeStrict a line may tear, but an
// aligned 8-byte word never does.
func TestStrictModeWordsAreAtomic(t *testing.T) {
	lineRun(t, transport.ModeStrict, func(t *testing.T, span []byte) {
		if off, ok := uniform(span, 8); !ok {
			t.Errorf("torn word at +%d: %x", off, span[off:off+8])
		}
	})
}
