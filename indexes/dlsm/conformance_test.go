package dlsm_test

import (
	"testing"

	_ "github.com/dmbench/dmbench/indexes/dlsm"
	"github.com/dmbench/dmbench/indexes/indextest"
)

// dLSM passes the conformance suite with its scaled defaults, which flush
// and compact many times over the suite's few thousand keys.
func TestConformance(t *testing.T) {
	indextest.Run(t, "dlsm", nil)
}
