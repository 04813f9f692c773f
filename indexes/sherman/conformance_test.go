package sherman_test

import (
	"testing"

	"github.com/dmbench/dmbench/indexes/indextest"
	_ "github.com/dmbench/dmbench/indexes/sherman"
)

// Sherman passes the conformance suite in every consistency variant.
// P-Sherman (partitioned=true) is not run here: it is correct only while
// each compute node writes its own key range, and the suite's cases write
// every key from every compute node; TestPartitionedClients checks it
// with clients that keep to their partitions.
func TestConformance(t *testing.T) {
	for _, v := range []string{"versions", "optlock", "crc"} {
		indextest.Run(t, "sherman", map[string]string{"consistency": v})
	}
}
