package marlin_test

import (
	"testing"

	"github.com/dmbench/dmbench/indexes/indextest"
	_ "github.com/dmbench/dmbench/indexes/marlin"
)

// Marlin passes the conformance suite on both fabrics in both memory
// modes: it declares no reliance on paper mode.
func TestConformance(t *testing.T) { indextest.Run(t, "marlin", nil) }
