package tcp_test

import (
	"fmt"
	"io"
	"net"
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
