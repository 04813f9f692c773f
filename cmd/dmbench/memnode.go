package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport/rendezvous"
	"github.com/dmbench/dmbench/transport/tcp"
	"github.com/dmbench/dmbench/transport/verbs"
)

func memnodeCommand() *cli.Command {
	return &cli.Command{
		Name:  "memnode",
		Usage: "serve one memory node's regions over TCP to runs on the tcp fabric",
		Description: "The server executes the one-sided verbs its clients send (an emulation of RDMA, not RDMA) " +
			"and runs the chunk allocator on its cores, and the handlers of DEX's pushdown and dLSM's compaction when a run installs them. The first run to connect lays out its regions and " +
			"tells it its node id; runs point at it with dmbench run --fabric tcp --memnodes ADDR,... --key FILE.",
		UsageText: "dmbench memnode --listen ADDR --bytes N --cores C --key FILE [--rendezvous ADDR] [--verbs [--verbs-device DEV]]",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:7400", Usage: "`ADDR` (host:port) to listen on"},
			&cli.StringFlag{Name: "bytes", Usage: "memory the node may hold in all its regions: bytes, or KiB/MiB/GiB or KB/MB/GB", Required: true},
			&cli.IntFlag{Name: "cores", Value: 1, Usage: "RPC handlers that run at once (the memory node's cores)"},
			&cli.StringFlag{Name: "key", Usage: "`FILE` holding the cluster key; clients must prove they hold the same", Required: true},
			&cli.StringFlag{Name: "rendezvous", Usage: "also serve the rendezvous where compute-node processes (dmbench computenode) meet, on `ADDR` (host:port); the first memory node does"},
		}, verbsFlags...),
		Action: func(ctx *cli.Context) error {
			capacity, err := size("--bytes", ctx.String("bytes"))
			if err != nil {
				return err
			}
			key, err := readKey(ctx.String("key"))
			if err != nil {
				return err
			}
			cfg := tcp.ServerConfig{Key: key, Capacity: capacity, Cores: ctx.Int("cores"), Install: indexes.Offloads,
				Logf: func(format string, args ...any) { fmt.Fprintf(os.Stderr, "dmbench memnode: "+format+"\n", args...) }}
			var rdma *verbsServer
			if ctx.Bool("verbs") {
				if rdma, err = newVerbsServer(ctx); err != nil {
					return err
				}
				defer rdma.Close()
				cfg.OnMemory = rdma.onMemory
			}
			srv, err := tcp.NewServer(cfg)
			if err != nil {
				return err
			}
			if rdma != nil {
				srv.Handle(verbs.MethodConnect, rdma.handler)
			}
			addr, err := srv.Listen(ctx.String("listen"))
			if err != nil {
				return fmt.Errorf("--listen: %w", err)
			}
			fmt.Printf("dmbench memnode: serving up to %d bytes on %s with %d cores (one-sided verbs emulated over TCP); Ctrl-C stops it\n", capacity, addr, ctx.Int("cores"))
			if a := ctx.String("rendezvous"); a != "" {
				rv, err := rendezvous.NewServer(a, key)
				if err != nil {
					return errors.Join(fmt.Errorf("--rendezvous: %w", err), srv.Close())
				}
				defer rv.Close()
				fmt.Printf("dmbench memnode: rendezvous for compute-node processes on %s\n", rv.Addr())
			}
			stop, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer cancel()
			<-stop.Done()
			return srv.Close()
		},
	}
}

// readKey reads the cluster key file named by --key.
func readKey(file string) ([]byte, error) {
	key, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--key: %w", err)
	}
	if len(key) == 0 {
		return nil, fmt.Errorf("--key %s: the file is empty; put a secret in it, e.g. head -c 32 /dev/urandom > %s", file, file)
	}
	return key, nil
}
