package ideal_test

import (
	"testing"

	_ "github.com/dmbench/dmbench/indexes/ideal"
	"github.com/dmbench/dmbench/indexes/indextest"
)

// The Expected bound passes the conformance suite like any index.
func TestConformance(t *testing.T) {
	indextest.Run(t, "ideal", nil)
}
