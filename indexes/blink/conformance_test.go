package blink_test

import (
	"testing"

	_ "github.com/dmbench/dmbench/indexes/blink"
	"github.com/dmbench/dmbench/indexes/indextest"
)

// The B-link tree passes the conformance suite on both fabrics and in
// both memory modes, with no part of it relying on paper mode.
func TestConformance(t *testing.T) {
	indextest.Run(t, "blink", nil)
}
