package fpbtree

import "github.com/dmbench/dmbench/transport"

// The steps of DMTree's Table 1 (section 5.3), which an operation's time
// is broken down into (transport.Endpoint.SetStep). Step 0, "other", is
// what none of them covers: splits and merges, the re-location after a
// version mismatch, and waiting for a read-delegation or write-combining
// batch.
const (
	// StepInternalCache locates the leaf: the cached bottom level and,
	// on a miss, the remote traversal that refills it.
	StepInternalCache transport.Step = iota + 1
	// StepFPTraversal hashes the key and probes fingerprints, in a table
	// on the caller's own node (a cached copy or a local primary).
	StepFPTraversal
	// StepLocking takes and releases the leaf lock: local lock queue,
	// CAS retries, an unlock WRITE of its own.
	StepLocking
	// StepFPSync READs and WRITEs a table on another node: DMTree's
	// primary on a peer (with the refresh of the local copy), the
	// FP-B+-tree's table in the leaf. The unlock a table WRITE carries
	// is part of it.
	StepFPSync
	// StepKV READs and WRITEs leaf entries, and a scan's entry runs.
	StepKV
)

// StepNames names steps 1 to 5 for indexes.Spec.Steps.
var StepNames = []string{"internal_cache", "fp_traversal", "locking", "fp_sync", "kv"}

// label makes step s the caller's from here on and returns the step in
// force before, for the caller to restore when it is done:
//
//	defer c.ep.SetStep(c.label(StepKV))
//
// A helper so labelled counts as its step wherever it is called from, and
// its caller's own time (a split's, say) keeps the caller's step.
func (c *Client) label(s transport.Step) transport.Step {
	prev := c.ep.Step()
	c.ep.SetStep(s)
	return prev
}

// tableStep is the step of an access to the table block at a: local
// tables are traversed, remote ones synchronised.
func (c *Client) tableStep(a transport.GAddr) transport.Step {
	if a.Node() == c.ep.Node() {
		return StepFPTraversal
	}
	return StepFPSync
}
