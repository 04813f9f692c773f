package fabrictest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dmbench/dmbench/transport"
)

// badAccess is an access every fabric must refuse with an AddrError.
type badAccess struct {
	name   string
	addr   transport.GAddr
	len    int    // bytes of the READ/WRITE
	region string // the region the message names; "" for none
	// atomicOnly marks addresses that are bad only for an atomic.
	atomicOnly bool
}

// testAddrErrors checks that bad addresses fail with a *transport.AddrError
// naming the address and region, through every verb, Post and Setup.
func testAddrErrors(t *testing.T, s suite) {
	cfg := s.config()
	f := s.build(t, cfg)
	c0, c1 := cfg.ComputeNodeIDs()[0], cfg.ComputeNodeIDs()[1]
	peer, err := f.AddRegion(c1, "peer", 4096)
	if err != nil {
		t.Fatalf("AddRegion: %v", err)
	}
	main, device := region(t, f, 0, "main"), region(t, f, 0, "device")
	bad := []badAccess{
		{name: "nil address", addr: 0, len: 8},
		{name: "below the first region", addr: transport.Addr(0, 64), len: 8},
		{name: "beyond every region", addr: transport.Addr(0, 1<<40), len: 8},
		{name: "node that does not exist", addr: transport.Addr(999, transport.RegionAlign), len: 8},
		{name: "past the end of main", addr: main.End().Add(^uint64(3)), len: 8, region: "main"},
		{name: "past the end of device", addr: device.End().Add(^uint64(3)), len: 8, region: "device"},
		{name: "past the end of a compute node region", addr: peer.End().Add(^uint64(0)), len: 2, region: "peer"},
		{name: "misaligned atomic", addr: main.Base.Add(transport.MetaBytes + 4), len: 8, region: "main", atomicOnly: true},
	}
	// A good WRITE ahead of the bad op in a batch must not take effect.
	guard := scratch(t, f, 1)

	t.Run("client", func(t *testing.T) {
		f.Go(c0, 0, func(ep transport.Endpoint) {
			for _, b := range bad {
				checkBadAccess(t, ep, b, guard)
			}
		})
		run(t, f)
	})
	t.Run("setup", func(t *testing.T) {
		ep := f.Setup(c0)
		for _, b := range bad {
			checkBadAccess(t, ep, b, guard)
		}
	})
}

// checkBadAccess tries b with every verb it is bad for, alone and as the
// second op of a batch whose first op writes to guard.
func checkBadAccess(t *testing.T, ep transport.Endpoint, b badAccess, guard transport.GAddr) {
	type attempt struct {
		verb transport.VerbKind
		err  error
	}
	var tries []attempt
	if !b.atomicOnly {
		tries = append(tries,
			attempt{transport.VerbRead, ep.Read(make([]byte, b.len), b.addr)},
			attempt{transport.VerbWrite, ep.Write(b.addr, make([]byte, b.len))})
	}
	_, errCAS := ep.CAS(b.addr, 0, 1)
	_, errMasked := ep.MaskedCAS(b.addr, 0, 1, 1, 1)
	_, errFAA := ep.FAA(b.addr, 1)
	tries = append(tries,
		attempt{transport.VerbCAS, errCAS},
		attempt{transport.VerbMaskedCAS, errMasked},
		attempt{transport.VerbFAA, errFAA})
	for _, a := range tries {
		checkAddrError(t, fmt.Sprintf("%s %s", b.name, a.verb), a.err, a.verb, b)
	}

	badOp := transport.FAAOp(b.addr, 1)
	if !b.atomicOnly {
		badOp = transport.ReadOp(make([]byte, b.len), b.addr)
	}
	marker := []byte("must not be written")
	err := ep.Post(transport.WriteOp(guard, marker), badOp)
	checkAddrError(t, b.name+" in a batch", err, badOp.Kind, b)
	got := make([]byte, len(marker))
	if ok(t, ep.Read(got, guard), "read guard") && bytes.Equal(got, marker) {
		t.Errorf("%s in a batch: the batch's good WRITE took effect", b.name)
	}
}

func checkAddrError(t *testing.T, what string, err error, verb transport.VerbKind, b badAccess) {
	t.Helper()
	var ae *transport.AddrError
	if !errors.As(err, &ae) {
		t.Errorf("%s: got error %v, want a *transport.AddrError", what, err)
		return
	}
	if ae.Addr != b.addr || ae.Verb != verb {
		t.Errorf("%s: AddrError for %s at %v, want %s at %v", what, ae.Verb, ae.Addr, verb, b.addr)
	}
	msg := err.Error()
	if !strings.Contains(msg, b.addr.String()) {
		t.Errorf("%s: message %q does not name the address %v", what, msg, b.addr)
	}
	switch {
	case b.region == "" && ae.Region != nil:
		t.Errorf("%s: error names region %v, want none", what, ae.Region)
	case b.region != "" && (ae.Region == nil || ae.Region.Name != b.region):
		t.Errorf("%s: error names region %v, want %q", what, ae.Region, b.region)
	case b.region != "" && !strings.Contains(msg, fmt.Sprintf("%q", b.region)):
		t.Errorf("%s: message %q does not name the region %q", what, msg, b.region)
	}
}
