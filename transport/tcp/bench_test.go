package tcp_test

import (
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/tcp"
)

// BenchmarkRead8 measures 8-byte READs from one memory node on loopback:
// clients on one compute node each issue one READ at a time, so the verbs
// in flight on the shared connection are the clients. It reports verbs
// per second (compare FACTS-cluster.md: plain Go loopback TCP gives 62k
// ops/s synchronous and 1.0-1.3 M ops/s pipelined on these machines).
func BenchmarkRead8(b *testing.B) {
	for _, clients := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			f, err := tcp.New(transport.Config{ComputeNodes: 1, MemoryNodes: 1, Threads: clients,
				MemoryCores: 1, ComputeCores: 1, MemoryBytes: 1 << 20, Mode: transport.ModeStrict}, tcp.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			main, err := f.Region(0, "main")
			if err != nil {
				b.Fatal(err)
			}
			for c := range clients {
				n := b.N / clients
				if c < b.N%clients {
					n++
				}
				f.Go(1, c, func(ep transport.Endpoint) {
					buf := make([]byte, 8)
					a := main.Base.Add(transport.MetaBytes + uint64(c)*64)
					for range n {
						if err := ep.Read(buf, a); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			b.ResetTimer()
			start := time.Now()
			if err := f.Run(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "verbs/s")
			st := f.Stats()
			if got := st.Verbs.Total()[transport.VerbRead].Count; got != uint64(b.N) {
				b.Fatalf("Stats counted %d READs of %d", got, b.N)
			}
		})
	}
}

// BenchmarkLoopbackEcho is the yardstick in the same run: plain Go TCP on
// loopback, each client with a connection of its own, sending 8 bytes and
// waiting for them to come back, one round trip at a time. The ratio of
// BenchmarkRead8 to it is what the fabric's framing, checking and
// dispatch cost over the bare socket, whatever the machine's load.
func BenchmarkLoopbackEcho(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
	for _, clients := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			conns := make([]net.Conn, clients)
			for i := range conns {
				if conns[i], err = net.Dial("tcp", ln.Addr().String()); err != nil {
					b.Fatal(err)
				}
				defer conns[i].Close()
			}
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for i, c := range conns {
				n := b.N / clients
				if i < b.N%clients {
					n++
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					buf := make([]byte, 8)
					for range n {
						if _, err := c.Write(buf); err != nil {
							b.Error(err)
							return
						}
						if _, err := io.ReadFull(c, buf); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ops/s")
		})
	}
}

// BenchmarkRedisGet is the outside yardstick in the same run:
// redis-benchmark's 8-byte GETs against a redis-server on loopback, with
// as many clients as BenchmarkRead8 and one request in flight each (no
// pipelining), so that BenchmarkRead8's verbs/s over its ops/s is the
// fabric against a tuned key-value server on the same machine at the
// same moment. It skips when redis-server or redis-benchmark is missing
// (apt-get install redis-server).
func BenchmarkRedisGet(b *testing.B) {
	server, err := exec.LookPath("redis-server")
	if err != nil {
		b.Skip("redis-server is not installed (apt-get install redis-server)")
	}
	bench, err := exec.LookPath("redis-benchmark")
	if err != nil {
		b.Skip("redis-benchmark is not installed (apt-get install redis-server)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	srv := exec.Command(server, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := srv.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	for range 100 { // wait for it to listen, at most a second
		if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
			c.Close()
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, clients := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			n := max(b.N, clients)
			out, err := exec.Command(bench, "-h", "127.0.0.1", "-p", port, "-t", "get", "-d", "8",
				"-c", strconv.Itoa(clients), "-n", strconv.Itoa(n), "-P", "1", "--csv").Output()
			if err != nil {
				b.Fatalf("redis-benchmark: %v", err)
			}
			// --csv prints a header, then "GET",rps,...
			for _, line := range strings.Split(string(out), "\n") {
				f := strings.Split(line, ",")
				if len(f) > 1 && strings.Trim(f[0], `"`) == "GET" {
					rps, err := strconv.ParseFloat(strings.Trim(f[1], `"`), 64)
					if err != nil {
						b.Fatalf("redis-benchmark's GET line %q: %v", line, err)
					}
					b.ReportMetric(rps, "ops/s")
					return
				}
			}
			b.Fatalf("redis-benchmark printed no GET line:\n%s", out)
		})
	}
}
