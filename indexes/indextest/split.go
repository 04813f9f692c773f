package indextest

import (
	"testing"

	"github.com/dmbench/dmbench/indexes"
)

// testSplit runs the bulk-load, linearizability and stale-cache cases
// with every compute node on an index instance of its own, attached to
// the one the first compute node built and loaded (Options.Split): what
// the index knows across compute nodes must reach them through memory
// and counted RPCs, as between processes, not through shared Go objects.
// Paper mode only: strict mode changes what a torn read is, not what the
// compute nodes share.
func testSplit(t *testing.T, c *combo) {
	if spec, err := indexes.Lookup(c.suite.Index); err == nil && spec.Oracle != "" {
		t.Skipf("%s has no split mode: %s", spec.Name, spec.Oracle)
	}
	split := *c
	split.split = true
	t.Run("BulkLoad", func(t *testing.T) { testBulkLoad(t, &split) })
	t.Run("Linearizable", func(t *testing.T) { testLinearizable(t, &split) })
	t.Run("StaleCaches", func(t *testing.T) { testStaleCaches(t, &split) })
}
