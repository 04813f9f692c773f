package sim

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

func newTestFabric(t *testing.T, cfg transport.Config, prof Profile) *Fabric {
	t.Helper()
	if cfg.MemoryBytes == 0 {
		cfg.MemoryBytes = 8 << 20
	}
	if cfg.MemoryNodes == 0 {
		cfg.MemoryNodes = 1
	}
	if cfg.MemoryCores == 0 {
		cfg.MemoryCores = 1
	}
	if cfg.ComputeCores == 0 {
		cfg.ComputeCores = 1
	}
	if cfg.Threads == 0 {
		cfg.Threads = 1
	}
	f, err := New(cfg, prof)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func mainRegion(t *testing.T, f *Fabric, n transport.NodeID) transport.Region {
	t.Helper()
	r, err := f.Region(n, "main")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func run(t *testing.T, f *Fabric) {
	t.Helper()
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
}

func within(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol*want {
		t.Errorf("%s = %.4g, want %.4g within %.0f%%", what, got, want, tol*100)
	}
}

// The stages of an unloaded verb add up to the measured ~2 us round trip.
func TestUnloadedLatency(t *testing.T) {
	f := newTestFabric(t, transport.Config{ComputeNodes: 1, DeviceBytes: 4096}, CX6)
	m := mainRegion(t, f, 0)
	lat := map[string]int64{}
	f.Go(1, 0, func(ep transport.Endpoint) {
		buf := make([]byte, 8)
		measure := func(name string, verb func() error) {
			start := ep.Now()
			if err := verb(); err != nil {
				t.Error(err)
			}
			lat[name] = ep.Now() - start
		}
		measure("read", func() error { return ep.Read(buf, m.Base.Add(64)) })
		measure("write", func() error { return ep.Write(m.Base.Add(64), buf) })
		measure("cas", func() error { _, err := ep.CAS(m.Base.Add(64), 0, 1); return err })
	})
	run(t, f)
	if lat["read"] < 1900 || lat["read"] > 2000 {
		t.Errorf("8-byte READ round trip = %d ns, want 1900-2000 (perftest ib_read_lat 1.91 us)", lat["read"])
	}
	if lat["write"] >= lat["read"] {
		t.Errorf("WRITE %d ns should be faster than READ %d ns: it needs no PCIe read at the responder", lat["write"], lat["read"])
	}
	if lat["cas"] <= lat["read"] {
		t.Errorf("CAS %d ns should be slower than READ %d ns: it also passes the atomic unit", lat["cas"], lat["read"])
	}
}

// A closed loop of small READs saturates the memory node's message rate;
// of 1 KB READs, its link.
func TestNICCeilings(t *testing.T) {
	cases := []struct {
		name    string
		size    int
		msgUtil bool // which resource must saturate
	}{
		{"small-reads-hit-message-rate", 8, true},
		{"1KB-reads-hit-line-rate", 1024, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := closedReads(t, CX6, 6, 8, 4, 300, c.size)
			st := f.Stats()
			mem := st.Nodes[0]
			msg, bw, _, _ := st.Utilisation(0)
			ops := float64(st.Verbs.Total().Verbs())
			secs := float64(st.WindowNs) / 1e9
			if c.msgUtil {
				within(t, "READ rate (ops/s)", ops/secs, CX6.MsgRate, 0.05)
				if msg < 0.95 {
					t.Errorf("memory node message utilisation %.2f, want >= 0.95", msg)
				}
			} else {
				within(t, "memory node egress (bytes/s)", float64(mem.BytesTx)/secs, CX6.LineRate, 0.05)
				if bw < 0.95 || msg > 0.5 {
					t.Errorf("memory node link utilisation %.2f (want >= 0.95), message utilisation %.2f (want < 0.5)", bw, msg)
				}
			}
			for i := 1; i < len(st.Nodes); i++ {
				if m, _, _, _ := st.Utilisation(i); m > 0.5 {
					t.Errorf("compute node %d message utilisation %.2f: the requesters should not be the bottleneck", i, m)
				}
			}
		})
	}
}

// Atomics on one address serialise at the profile's same-address rate,
// faster on on-chip memory.
func TestSameAddressAtomics(t *testing.T) {
	for _, region := range []string{"main", "device"} {
		t.Run(region, func(t *testing.T) {
			f := newTestFabric(t, transport.Config{ComputeNodes: 2, Threads: 8, DeviceBytes: 4096}, CX6)
			r, err := f.Region(0, region)
			if err != nil {
				t.Fatal(err)
			}
			const perClient = 100
			clients := 0
			for _, n := range f.Config().ComputeNodeIDs() {
				for th := range 8 {
					for range 4 {
						clients++
						f.Go(n, th, func(ep transport.Endpoint) {
							for range perClient {
								if _, err := ep.FAA(r.Base, 1); err != nil {
									t.Error(err)
								}
							}
						})
					}
				}
			}
			run(t, f)
			st := f.Stats()
			want := CX6.AtomicRateHost
			if region == "device" {
				want = CX6.AtomicRateDevice
			}
			within(t, "FAA rate on one address", float64(clients*perClient)/(float64(st.WindowNs)/1e9), want, 0.05)
			buf := make([]byte, 8)
			if err := f.Setup(0).Read(buf, r.Base); err != nil {
				t.Fatal(err)
			}
			if got := binary.LittleEndian.Uint64(buf); got != uint64(clients*perClient) {
				t.Errorf("counter = %d, want %d", got, clients*perClient)
			}
		})
	}
}

// An atomic takes effect when its address's atomic unit executes it,
// not when it arrives: a READ arriving behind a queue of FAAs on one word
// sees only those already executed. And a QP's requests execute in order:
// a READ posted on the QP of a queued atomic waits for that atomic.
func TestAtomicsTakeEffectInTurn(t *testing.T) {
	const adders = 32
	f := newTestFabric(t, transport.Config{ComputeNodes: 1, Threads: adders + 1}, CX6)
	m := mainRegion(t, f, 0)
	hot, other := m.Base, m.Base.Add(4096)
	var seen uint64
	var behind int64
	for th := range adders {
		f.Go(1, th, func(ep transport.Endpoint) {
			if _, err := ep.FAA(hot, 1); err != nil {
				t.Error(err)
			}
		})
	}
	// A coroutine on the last adder's thread READs another word right
	// after that thread's FAA, on the same QP.
	f.Go(1, adders-1, func(ep transport.Endpoint) {
		start := ep.Now()
		if err := ep.Read(make([]byte, 8), other); err != nil {
			t.Error(err)
		}
		behind = ep.Now() - start
	})
	f.Go(1, adders, func(ep transport.Endpoint) {
		ep.Compute(3000)
		buf := make([]byte, 8)
		if err := ep.Read(buf, hot); err != nil {
			t.Error(err)
		}
		seen = binary.LittleEndian.Uint64(buf)
	})
	run(t, f)
	if seen == 0 || seen > adders/2 {
		t.Errorf("a READ arriving while %d FAAs queue on its word saw %d of them, want the few executed by then", adders, seen)
	}
	if queue := int64(adders) * int64(1e9/CX6.AtomicRateHost); behind < queue/2 {
		t.Errorf("a READ behind its QP's queued FAA took %d ns, want it to wait for the FAA's turn (queue of about %d ns)", behind, queue)
	}
}

// A QP holds at most MaxOutstanding READs in flight: the 17th READ of a
// batch waits for the first to complete.
func TestOutstandingReadsPerQP(t *testing.T) {
	f := newTestFabric(t, transport.Config{ComputeNodes: 1}, CX6)
	m := mainRegion(t, f, 0)
	lat := map[int]int64{}
	f.Go(1, 0, func(ep transport.Endpoint) {
		for _, n := range []int{1, 16, 17, 32} {
			ops := make([]transport.Op, n)
			for i := range ops {
				ops[i] = transport.ReadOp(make([]byte, 8), m.Base.Add(uint64(64*i)))
			}
			start := ep.Now()
			if err := ep.Post(ops...); err != nil {
				t.Error(err)
			}
			lat[n] = ep.Now() - start
		}
	})
	run(t, f)
	rtt := lat[1]
	if lat[16] > rtt+rtt/4 {
		t.Errorf("16 READs took %d ns, want about one round trip (%d ns)", lat[16], rtt)
	}
	if lat[17] < rtt*3/2 || lat[32] < rtt*3/2 || lat[32] > rtt*5/2 {
		t.Errorf("17 and 32 READs took %d and %d ns, want about two round trips (%d ns each)", lat[17], lat[32], rtt)
	}
}

// RPC handlers queue for the memory node's cores: four cores serve four
// times the rate of one, and one core runs at 1/(receive + handler + reply
// post) per second.
func TestRPCQueueing(t *testing.T) {
	const handlerNs, calls = 1000, 50
	rate := map[int]float64{}
	util := map[int]float64{}
	for _, cores := range []int{1, 4} {
		f := newTestFabric(t, transport.Config{ComputeNodes: 2, Threads: 8, MemoryCores: cores}, CX6)
		f.Handle(0, 1, func(ep transport.Endpoint, req []byte) ([]byte, error) {
			ep.Compute(handlerNs)
			return req, nil
		})
		for _, n := range f.Config().ComputeNodeIDs() {
			for th := range 8 {
				f.Go(n, th, func(ep transport.Endpoint) {
					for range calls {
						if _, err := ep.Call(0, 1, []byte("ping")); err != nil {
							t.Error(err)
						}
					}
				})
			}
		}
		run(t, f)
		st := f.Stats()
		rate[cores] = float64(16*calls) / (float64(st.WindowNs) / 1e9)
		_, _, util[cores], _ = st.Utilisation(0)
		if st.Nodes[0].RPCs != 16*calls {
			t.Errorf("%d cores: memory node served %d RPCs, want %d", cores, st.Nodes[0].RPCs, 16*calls)
		}
	}
	within(t, "1-core RPC rate", rate[1], 1e9/(CX6.RecvNs+handlerNs+CX6.PostNs), 0.05)
	if r := rate[4] / rate[1]; r < 3.5 {
		t.Errorf("4 cores serve %.2fx the RPC rate of 1, want >= 3.5x", r)
	}
	if util[1] < 0.95 || util[4] < 0.9 {
		t.Errorf("RPC core utilisation %.2f (1 core), %.2f (4 cores): want saturated", util[1], util[4])
	}
}

// An RPC costs a post and a receive on each side: the requester's core
// posts the request and takes the reply, the server's core takes the
// request and posts the reply (eRPC measures the two sides alike).
func TestRPCCostsBothSides(t *testing.T) {
	const calls = 100
	f := newTestFabric(t, transport.Config{ComputeNodes: 1, Threads: 1}, CX6)
	f.Handle(0, 1, func(ep transport.Endpoint, req []byte) ([]byte, error) { return req, nil })
	f.Go(1, 0, func(ep transport.Endpoint) {
		for range calls {
			if _, err := ep.Call(0, 1, []byte("ping")); err != nil {
				t.Error(err)
			}
		}
	})
	run(t, f)
	st := f.Stats()
	want := int64(calls * (CX6.PostNs + CX6.RecvNs))
	if got := st.Nodes[1].ThreadBusyNs; got != want {
		t.Errorf("requester core busy %d ns for %d calls, want %d (PostNs + RecvNs each)", got, calls, want)
	}
	if got := st.Nodes[0].CPUBusyNs; got != want {
		t.Errorf("server core busy %d ns for %d calls, want %d (RecvNs + PostNs each)", got, calls, want)
	}
}

// In paper mode a multi-line WRITE lands whole cachelines, lower lines
// first, so a READ never sees a torn line nor a newer line above an older
// one; in strict mode it does.
func TestTornReads(t *testing.T) {
	const lines = 4
	violations := func(mode transport.Mode) int {
		f := newTestFabric(t, transport.Config{ComputeNodes: 2, Threads: 4, Mode: mode, Seed: 7}, CX6)
		obj := mainRegion(t, f, 0).Base.Add(4096)
		bad := 0
		for th := range 4 {
			f.Go(1, th, func(ep transport.Endpoint) { // writers: fill with version v
				buf := make([]byte, lines*64)
				for v := 1; v <= 200; v++ {
					for i := range buf {
						buf[i] = byte(v)
					}
					if err := ep.Write(obj, buf); err != nil {
						t.Error(err)
					}
				}
			})
			f.Go(2, th, func(ep transport.Endpoint) { // readers
				buf := make([]byte, lines*64)
				for range 400 {
					if err := ep.Read(buf, obj); err != nil {
						t.Error(err)
					}
					if !landsInLineOrder(buf) {
						bad++
					}
				}
			})
		}
		run(t, f)
		return bad
	}
	if n := violations(transport.ModePaper); n != 0 {
		t.Errorf("paper mode: %d READs saw a torn line or a newer line above an older one", n)
	}
	if n := violations(transport.ModeStrict); n == 0 {
		t.Error("strict mode: no READ saw a torn object; words should land in any order")
	}
}

// landsInLineOrder reports whether every 64-byte line of buf holds one
// version and versions do not increase with the address. Writers here
// write increasing versions, so a lower line is never older than a higher
// one when lines land in increasing address order.
func landsInLineOrder(buf []byte) bool {
	prev := byte(255)
	for l := 0; l < len(buf); l += 64 {
		line := buf[l : l+64]
		if !bytes.Equal(line, bytes.Repeat(line[:1], 64)) {
			return false
		}
		if line[0] > prev {
			return false
		}
		prev = line[0]
	}
	return true
}

// mixedRun drives every mechanism: verbs, batches, atomics, a Mutex, RPC
// and Compute, from coroutines that draw from their endpoint's random
// source. It returns the event hash, the final virtual time and a digest
// of memory.
func mixedRun(t *testing.T, seed uint64, mode transport.Mode) (uint64, int64, []byte) {
	f := newTestFabric(t, transport.Config{ComputeNodes: 2, MemoryNodes: 2, Threads: 3, MemoryCores: 2, Mode: mode, Seed: seed, MemoryBytes: 1 << 20}, CX6)
	for _, n := range f.Config().MemoryNodeIDs() {
		f.Handle(n, 7, func(ep transport.Endpoint, req []byte) ([]byte, error) {
			ep.Compute(int64(len(req)) * 10)
			return append([]byte("ok:"), req...), nil
		})
	}
	var mu transport.Mutex
	for _, n := range f.Config().ComputeNodeIDs() {
		for th := range 3 {
			for range 3 {
				f.Go(n, th, func(ep transport.Endpoint) {
					rng := ep.Rand()
					buf := make([]byte, 200)
					for range 100 {
						mn := transport.NodeID(rng.IntN(2))
						base := mainRegion(t, f, mn).Base.Add(transport.MetaBytes)
						a := base.Add(rng.Uint64N(4096) * 8)
						var err error
						switch rng.IntN(6) {
						case 0:
							err = ep.Read(buf[:rng.IntN(200)+1], a)
						case 1:
							for i := range buf {
								buf[i] = byte(rng.Uint32())
							}
							err = ep.Write(a, buf[:rng.IntN(200)+1])
						case 2:
							_, err = ep.CAS(a, 0, rng.Uint64())
						case 3:
							err = ep.Post(transport.FAAOp(a, 1), transport.ReadOp(buf[:64], a), transport.WriteOp(a.Add(64), buf[:100]))
						case 4:
							mu.Lock(ep)
							ep.Compute(int64(rng.IntN(500)))
							mu.Unlock()
						case 5:
							_, err = ep.Call(mn, 7, buf[:rng.IntN(50)])
						}
						if err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
		}
	}
	run(t, f)
	var digest []byte
	for _, n := range f.Config().MemoryNodeIDs() {
		buf := make([]byte, 64<<10)
		if err := f.Setup(n).Read(buf, mainRegion(t, f, n).Base.Add(transport.MetaBytes)); err != nil {
			t.Fatal(err)
		}
		digest = append(digest, buf...)
	}
	return f.EventHash(), f.Now(), digest
}

func TestDeterminism(t *testing.T) {
	for _, mode := range []transport.Mode{transport.ModePaper, transport.ModeStrict} {
		t.Run(mode.String(), func(t *testing.T) {
			h1, t1, m1 := mixedRun(t, 42, mode)
			h2, t2, m2 := mixedRun(t, 42, mode)
			if h1 != h2 || t1 != t2 || !bytes.Equal(m1, m2) {
				t.Errorf("same seed: hashes %#x vs %#x, end times %d vs %d, memory equal %v", h1, h2, t1, t2, bytes.Equal(m1, m2))
			}
			h3, _, _ := mixedRun(t, 43, mode)
			if h3 == h1 {
				t.Errorf("seeds 42 and 43 gave the same event hash %#x", h1)
			}
		})
	}
}

// Coroutines of one thread share its core; coroutines of different
// threads run in parallel.
func TestThreadsShareTheirCore(t *testing.T) {
	elapsed := func(threads int) int64 {
		f := newTestFabric(t, transport.Config{ComputeNodes: 1, Threads: threads}, CX6)
		for i := range 4 {
			f.Go(1, i%threads, func(ep transport.Endpoint) { ep.Compute(1000) })
		}
		run(t, f)
		return f.Now()
	}
	if got := elapsed(1); got != 4000 {
		t.Errorf("4 coroutines on one thread computing 1 us each took %d ns, want 4000", got)
	}
	if got := elapsed(4); got != 1000 {
		t.Errorf("4 threads computing 1 us each took %d ns, want 1000", got)
	}
}

// A contended Mutex parks waiters in virtual time and hands the lock over
// in FIFO order, each handoff to another core (here, of a queue lock)
// costing one cache-line transfer.
func TestMutexInVirtualTime(t *testing.T) {
	f := newTestFabric(t, transport.Config{ComputeNodes: 1, Threads: 8}, CX6)
	var mu transport.Mutex
	var order []int
	for i := range 8 {
		f.Go(1, i, func(ep transport.Endpoint) {
			ep.Compute(int64(i)) // arrive in index order
			mu.Lock(ep)
			order = append(order, i)
			ep.Compute(1000)
			mu.Unlock()
		})
	}
	run(t, f)
	want := 8000 + 7*cost.CachelineTransfer()
	if got := f.Now(); got < want || got > want+10 {
		t.Errorf("8 holders of 1 us each finished at %d ns, want ~%d (7 handoffs)", got, want)
	}
	for i, v := range order {
		if v != i {
			t.Fatalf("lock order %v, want FIFO 0..7", order)
		}
	}
}

// A verb on the caller's own node is a local access: no NIC message, not
// counted as a verb.
func TestLocalVerbsSkipTheNIC(t *testing.T) {
	f := newTestFabric(t, transport.Config{ComputeNodes: 1, ComputeBytes: 1 << 20}, CX6)
	own := mainRegion(t, f, 1)
	f.Go(1, 0, func(ep transport.Endpoint) {
		start := ep.Now()
		if err := ep.Write(own.Base, []byte("fingerprint")); err != nil {
			t.Error(err)
		}
		if d := ep.Now() - start; d > 300 {
			t.Errorf("local WRITE took %d ns, want a memory access (< 300 ns)", d)
		}
	})
	run(t, f)
	st := f.Stats()
	if st.Nodes[1].Msgs != 0 {
		t.Errorf("local WRITE cost %d NIC messages, want 0", st.Nodes[1].Msgs)
	}
	if c := st.Verbs.Total().Verbs(); c != 0 {
		t.Errorf("local WRITE counted as %d verbs, want 0: it is not RDMA", c)
	}
}

// A node that both issues and serves verbs serves requests at once: the
// responses it has booked on its own receive link for later must not
// hold up a request arriving now (a peer reading DMTree's fingerprint
// tables on a busy compute node).
func TestServingNodeIsNotHeldUpByItsOwnBookings(t *testing.T) {
	f := newTestFabric(t, transport.Config{ComputeNodes: 2, Threads: 8, ComputeBytes: 1 << 20}, CX6)
	mem, peer := mainRegion(t, f, 0), mainRegion(t, f, 1)
	var worst int64
	for th := range 8 {
		f.Go(1, th, func(ep transport.Endpoint) { // node 1: busy requester
			buf := make([]byte, 64)
			for i := range 2000 {
				if err := ep.Read(buf, mem.Base.Add(uint64(i%64)*64)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	f.Go(2, 0, func(ep transport.Endpoint) { // node 2 reads node 1's memory
		buf := make([]byte, 48)
		for i := range 200 {
			start := ep.Now()
			if err := ep.Read(buf, peer.Base.Add(uint64(i%16)*64)); err != nil {
				t.Error(err)
			}
			worst = max(worst, ep.Now()-start)
		}
	})
	run(t, f)
	if worst > 2300 {
		t.Errorf("slowest READ served by a busy compute node took %d ns; an unloaded one takes ~1950", worst)
	}
}

// Every nanosecond of a client's virtual time is attributed once: to the
// activity it waited for and to the index's step in force, under its tag.
func TestTimeBreakdown(t *testing.T) {
	f := newTestFabric(t, transport.Config{ComputeNodes: 1, DeviceBytes: 4096}, CX6)
	m := mainRegion(t, f, 0)
	const tag, lookup, lock = transport.Tag(3), transport.Step(1), transport.Step(2)
	var read, cas, total int64
	f.Go(1, 0, func(ep transport.Endpoint) {
		buf := make([]byte, 8)
		start := ep.Now()
		ep.SetTag(tag)
		ep.SetStep(lookup)
		if err := ep.Read(buf, m.Base.Add(64)); err != nil {
			t.Error(err)
		}
		read = ep.Now() - start
		ep.Compute(1000)
		ep.SetStep(lock)
		t0 := ep.Now()
		if _, err := ep.CAS(m.Base.Add(64), 0, 1); err != nil {
			t.Error(err)
		}
		cas = ep.Now() - t0
		ep.Sleep(500)
		ep.SetTag(0)
		if ep.Step() != 0 {
			t.Errorf("SetTag left step %d, want 0", ep.Step())
		}
		total = ep.Now() - start
	})
	run(t, f)
	ts := f.Stats().Verbs.Time
	act := ts.Activity[tag]
	for a, want := range map[transport.Activity]int64{
		transport.ActRead: read, transport.ActCompute: 1000, transport.ActAtomic: cas, transport.ActWait: 500,
	} {
		if got := act[a]; got < want-1 || got > want {
			t.Errorf("%s time = %d ns, want %d", a, got, want)
		}
	}
	if got := ts.Steps[tag][lookup]; got < read+999 || got > read+1000 {
		t.Errorf("lookup step = %d ns, want READ + compute = %d", got, read+1000)
	}
	if got := ts.Steps[tag][lock]; got < cas+499 || got > cas+500 {
		t.Errorf("lock step = %d ns, want CAS + sleep = %d", got, cas+500)
	}
	var sum int64
	for _, d := range act {
		sum += d
	}
	if sum < total-4 || sum > total {
		t.Errorf("activities add up to %d ns of %d", sum, total)
	}
}
