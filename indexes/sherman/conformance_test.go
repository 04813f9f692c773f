package sherman_test

import (
	"testing"

	"github.com/dmbench/dmbench/indexes/indextest"
	_ "github.com/dmbench/dmbench/indexes/sherman"
)

// Sherman passes the conformance suite in every consistency variant
// (optlock also with DEX's lock-word test, optcheck=dex), and
// P-Sherman (partitioned=true), whose keys the suite writes only from
// their owners' compute nodes, with the RDMA protocols DEX's evaluation
// gives it; and with the DMTree artifact's sibling-chasing scans
// (scan=chain).
func TestConformance(t *testing.T) {
	for _, p := range []map[string]string{
		{"consistency": "versions"},
		{"consistency": "versions", "scan": "chain"},
		{"consistency": "optlock"},
		{"consistency": "optlock", "optcheck": "dex"},
		{"consistency": "crc"},
		{"consistency": "optlock", "partitioned": "true"},
		{"consistency": "crc", "partitioned": "true"},
	} {
		indextest.Run(t, "sherman", p)
	}
}
