package chime_test

import (
	"testing"

	_ "github.com/dmbench/dmbench/indexes/chime"
	"github.com/dmbench/dmbench/indexes/indextest"
)

// CHIME passes the conformance suite with masked CAS and with the plain-CAS
// fallback, at CHIME's span and at the DMTree experiments' span.
func TestConformance(t *testing.T) {
	for _, p := range []map[string]string{
		nil,
		{"span": "32", "maskedcas": "false"},
	} {
		indextest.Run(t, "chime", p)
	}
}
