package fabrictest

import (
	"bytes"
	"testing"

	"github.com/dmbench/dmbench/transport"
)

// maskedCASCases follow the ConnectX extended atomics: compare only the
// bits of cmpMask, replace only the bits of swapMask, and on a failed
// compare leave the word as it was. want is the word afterwards.
var maskedCASCases = []struct {
	name                                  string
	init, expect, swap, cmpMask, swapMask uint64
	want                                  uint64
}{
	{"masked bits match", 0x1122334455667788, 0x88, 0xaabb, 0xff, 0xff00, 0x112233445566aa88},
	{"masked bits differ", 0x1122334455667788, 0x87, 0xaabb, 0xff, 0xff00, 0x1122334455667788},
	{"unmasked bits differ", 0x1122334455667788, 0xffffffffffffff88, 0, 0xff, 0xff, 0x1122334455667700},
	{"empty compare mask", 0x1122334455667788, 0, 0xffffffff00000000, 0, 0xffff000000000000, 0xffff334455667788},
	{"empty swap mask", 0x1122334455667788, 0x1122334455667788, 0, ^uint64(0), 0, 0x1122334455667788},
	{"full masks match", 0x1122334455667788, 0x1122334455667788, 0xdead, ^uint64(0), ^uint64(0), 0xdead},
	{"full masks differ", 0x1122334455667788, 0x1122334455667789, 0xdead, ^uint64(0), ^uint64(0), 0x1122334455667788},
	{"take a free lock bit", 0x10, 0, 1, 1, 1, 0x11},
	{"lock bit already taken", 0x11, 0, 1, 1, 1, 0x11},
	{"swap high half keyed on low half", 0x00000000_00000005, 5, 0x00000007_00000000, 0xffffffff, 0xffffffff_00000000, 0x00000007_00000005},
}

// testAtomics checks CAS, masked CAS and FAA on each kind of region, word
// order in memory, and exact results under contention.
func testAtomics(t *testing.T, s suite) {
	cfg := s.config()
	f := s.build(t, cfg)
	c0, c1 := cfg.ComputeNodeIDs()[0], cfg.ComputeNodeIDs()[1]
	locks, err := f.AddRegion(c1, "locks", 4096)
	if err != nil {
		t.Fatalf("AddRegion: %v", err)
	}
	targets := []struct {
		name string
		base transport.GAddr
	}{
		{"memory node", scratch(t, f, 0)},
		{"device region", region(t, f, 0, "device").Base},
		{"compute node region", locks.Base},
	}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			f.Go(c0, 0, func(ep transport.Endpoint) { checkAtomics(t, ep, tg.base) })
			run(t, f)
		})
	}

	t.Run("contended", func(t *testing.T) {
		faa, cas := scratch(t, f, 1), scratch(t, f, 1).Add(8)
		const perClient = 50
		clients := 0
		for _, n := range cfg.ComputeNodeIDs() {
			for th := range cfg.Threads {
				for range 2 {
					clients++
					f.Go(n, th, func(ep transport.Endpoint) { increment(t, ep, faa, cas, perClient) })
				}
			}
		}
		run(t, f)
		ep := f.Setup(0)
		for _, a := range []transport.GAddr{faa, cas} {
			if got, _ := readWord(t, ep, a); got != uint64(clients*perClient) {
				t.Errorf("word at %v = %d after %d clients added 1 %d times", a, got, clients, perClient)
			}
		}
	})
}

// checkAtomics runs the single-client atomic cases on words from base on.
func checkAtomics(t *testing.T, ep transport.Endpoint, base transport.GAddr) {
	expectWord := func(what string, a transport.GAddr, got, want uint64) {
		t.Helper()
		if got != want {
			t.Errorf("%s at %v = %#x, want %#x", what, a, got, want)
		}
	}
	a := base
	if !writeWord(t, ep, a, 42) {
		return
	}
	old, err := ep.CAS(a, 42, 7)
	ok(t, err, "CAS")
	expectWord("successful CAS returned", a, old, 42)
	v, _ := readWord(t, ep, a)
	expectWord("word after successful CAS", a, v, 7)
	old, err = ep.CAS(a, 42, 9)
	ok(t, err, "CAS")
	expectWord("failed CAS returned", a, old, 7)
	v, _ = readWord(t, ep, a)
	expectWord("word after failed CAS", a, v, 7)

	old, err = ep.FAA(a, 5)
	ok(t, err, "FAA")
	expectWord("FAA returned", a, old, 7)
	old, err = ep.FAA(a, ^uint64(0)) // adding 2^64-1 subtracts one
	ok(t, err, "FAA")
	expectWord("FAA of -1 returned", a, old, 12)
	v, _ = readWord(t, ep, a)
	expectWord("word after FAA", a, v, 11)
	b := base.Add(8)
	writeWord(t, ep, b, ^uint64(0))
	old, err = ep.FAA(b, 1)
	ok(t, err, "FAA")
	expectWord("FAA returned", b, old, ^uint64(0))
	v, _ = readWord(t, ep, b)
	expectWord("FAA wrapping around", b, v, 0)

	// Little-endian: the byte at the lowest address is the low byte.
	le := base.Add(16)
	ok(t, ep.Write(le, []byte{1, 2, 3, 4, 5, 6, 7, 8}), "write bytes")
	old, err = ep.CAS(le, 0x0807060504030201, 0x1122334455667788)
	ok(t, err, "CAS")
	expectWord("CAS on bytes 1..8 returned", le, old, 0x0807060504030201)
	got := make([]byte, 8)
	ok(t, ep.Read(got, le), "read bytes")
	if want := []byte{0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}; !bytes.Equal(got, want) {
		t.Errorf("bytes after CAS of 0x1122334455667788 = %x, want %x", got, want)
	}

	for i, c := range maskedCASCases {
		w := base.Add(64 + 8*uint64(i))
		writeWord(t, ep, w, c.init)
		old, err := ep.MaskedCAS(w, c.expect, c.swap, c.cmpMask, c.swapMask)
		if !ok(t, err, "masked CAS %q", c.name) {
			continue
		}
		if old != c.init {
			t.Errorf("masked CAS %q returned %#x, want the old word %#x", c.name, old, c.init)
		}
		if v, _ := readWord(t, ep, w); v != c.want {
			t.Errorf("masked CAS %q left %#x, want %#x", c.name, v, c.want)
		}
	}
}

// increment adds 1 to the word at faa with FAA and to the word at cas with
// a CAS retry loop, n times each.
func increment(t *testing.T, ep transport.Endpoint, faa, cas transport.GAddr, n int) {
	for range n {
		if _, err := ep.FAA(faa, 1); !ok(t, err, "FAA") {
			return
		}
		v, good := readWord(t, ep, cas)
		for good {
			old, err := ep.CAS(cas, v, v+1)
			if !ok(t, err, "CAS") {
				return
			}
			if old == v {
				break
			}
			v = old
		}
		if !good {
			return
		}
	}
}
