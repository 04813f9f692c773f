package sim

import (
	"testing"

	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/fabrictest"
)

// The sim fabric passes the fabric-agnostic semantics suite on both
// hardware profiles.
func TestSemantics(t *testing.T) {
	for _, prof := range []Profile{CX6, CX5} {
		t.Run(prof.Name, func(t *testing.T) {
			fabrictest.Run(t, func(t *testing.T, cfg transport.Config) transport.Fabric {
				f, err := New(cfg, prof)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { f.Close() })
				return f
			})
		})
	}
}
