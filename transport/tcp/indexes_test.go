package tcp_test

import (
	"testing"

	_ "github.com/dmbench/dmbench/indexes/ideal"
	"github.com/dmbench/dmbench/indexes/indextest"
	_ "github.com/dmbench/dmbench/indexes/sherman"
)

// TestConformance runs the index conformance suite on the tcp fabric for
// the ideal index and Sherman: the same index code, its verbs now framed
// over loopback TCP to the nodes' servers.
//
// Under the race detector it is skipped: the index code's races are the
// local fabric's to find, this fabric's own are exercised by
// TestSemantics, and the suite's 9,000 synchronous round trips a case
// would take minutes there.
func TestConformance(t *testing.T) {
	if raceEnabled {
		t.Skip("skipped under the race detector: index races are checked on the local fabric, the fabric's by TestSemantics")
	}
	for _, s := range []indextest.Suite{
		{Index: "ideal"},
		{Index: "sherman"},
	} {
		s.Fabrics = []string{indextest.TCP}
		// The cases wait on round trips, not on the CPU: run the two
		// indexes side by side.
		t.Run(s.Index, func(t *testing.T) {
			t.Parallel()
			s.Run(t)
		})
	}
}
