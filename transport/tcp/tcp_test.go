package tcp_test

import (
	"testing"

	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/fabrictest"
	"github.com/dmbench/dmbench/transport/tcp"
)

func newFabric(t *testing.T, cfg transport.Config) transport.Fabric {
	t.Helper()
	f, err := tcp.New(cfg, tcp.Options{})
	if err != nil {
		t.Fatalf("tcp.New: %v", err)
	}
	return f
}

func TestSemantics(t *testing.T) {
	fabrictest.Run(t, newFabric)
}
