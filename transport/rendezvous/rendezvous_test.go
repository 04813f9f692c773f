package rendezvous

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func server(t *testing.T) *Server {
	t.Helper()
	s, err := NewServer("127.0.0.1:0", []byte("key"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestExchange joins three processes, checks they get distinct positions
// and that an exchange gives every one all payloads by position.
func TestExchange(t *testing.T) {
	s := server(t)
	const n = 3
	var wg sync.WaitGroup
	got := make([][][]byte, n)
	pos := make([]int, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := Join(s.Addr(), []byte("key"), "run", n, 10*time.Second)
			if err != nil {
				errs[i] = err
				return
			}
			pos[i] = c.Position()
			got[i], errs[i] = c.Exchange("addrs", fmt.Appendf(nil, "node%d", c.Position()))
		}()
	}
	wg.Wait()
	seen := map[int]bool{}
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		seen[pos[i]] = true
		for p, b := range got[i] {
			if want := fmt.Sprintf("node%d", p); string(b) != want {
				t.Errorf("process %d: payload of position %d = %q, want %q", i, p, b, want)
			}
		}
	}
	if len(seen) != n {
		t.Errorf("positions %v are not distinct", pos)
	}
}

// TestAbortNamesTheNode checks that an abort fails the others' exchange
// with the failed position and reason.
func TestAbortNamesTheNode(t *testing.T) {
	s := server(t)
	a, err := Join(s.Addr(), []byte("key"), "run", 2, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Join(s.Addr(), []byte("key"), "run", 2, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := a.Exchange("loaded", nil); done <- err }()
	if err := b.Abort(errors.New("memory node 1 at 198.18.0.2:7400: connection reset")); err != nil {
		t.Fatal(err)
	}
	err = <-done
	if err == nil || !strings.Contains(err.Error(), "compute node 1 failed: memory node 1 at 198.18.0.2:7400") {
		t.Errorf("exchange after an abort: %v, want the failed node and reason", err)
	}
}

// TestRefusals checks the key, the run size and a timeout each give one
// clear error.
func TestRefusals(t *testing.T) {
	s := server(t)
	if _, err := Join(s.Addr(), []byte("other"), "run", 2, time.Second); err == nil || !strings.Contains(err.Error(), "cluster key does not match") {
		t.Errorf("join with a wrong key: %v", err)
	}
	c, err := Join(s.Addr(), []byte("key"), "run", 2, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Join(s.Addr(), []byte("key"), "run", 3, time.Second); err == nil || !strings.Contains(err.Error(), "3 compute nodes joined one of 2") {
		t.Errorf("join with another size: %v", err)
	}
	if _, err := c.Exchange("addrs", nil); err == nil || !strings.Contains(err.Error(), "compute nodes [1] did not reach exchange \"addrs\"") {
		t.Errorf("exchange nobody else reaches: %v", err)
	}
}

// TestGoneProcessAborts has one of two processes vanish without a word
// (its presence connection closes, as when it is killed): the other's
// exchange fails at once, naming it, instead of at the timeout.
func TestGoneProcessAborts(t *testing.T) {
	s := server(t)
	a, err := Join(s.Addr(), []byte("key"), "run", 2, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Join(s.Addr(), []byte("key"), "run", 2, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	start := time.Now()
	go func() { _, err := a.Exchange("loaded", nil); done <- err }()
	time.Sleep(100 * time.Millisecond) // b's presence is up
	b.Leave()
	err = <-done
	if want := fmt.Sprintf("compute node %d's process is gone", b.Position()); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("exchange after the other process went: %v, want %q", err, want)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the exchange failed after %v, not at once", d)
	}
}
