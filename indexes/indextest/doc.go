// Package indextest is the conformance suite every index of dmbench passes
// before it counts: it checks an index against the contract of
// indexes.Index and indexes.Client, alone and under concurrency, on both
// the simulator and the real-time local fabric, in both memory modes. An
// index's tests import the index (for its registration) and call Run:
//
//	import (
//		_ "github.com/dmbench/dmbench/indexes/sherman"
//		"github.com/dmbench/dmbench/indexes/indextest"
//	)
//
//	func TestConformance(t *testing.T) { indextest.Run(t, "sherman", nil) }
//
// Run takes the index's raw parameters (P-Sherman is
// Run(t, "sherman", map[string]string{"partitioned": "true"})); Suite sets
// the few cluster sizes an index may need to raise. Subtests are named
// fabric/mode/case, so `go test -run 'Conformance/sim/strict/Deletes'`
// runs one; the two memory modes of a fabric run in parallel. Under the
// race detector the sim subtests are skipped: sim clients run one at a
// time, handing over through coroutine switches, so the detector can find
// nothing there, and they would double the time; the race detector's
// target is the local fabric, whose clients are real goroutines.
//
// # Cluster and determinism
//
// Each case builds a fresh cluster (Config): 2 memory nodes of 64 MiB with
// 256 KiB of on-chip memory, 3 compute nodes of 2 threads with 2 client
// coroutines each (12 clients) and a 4 MiB cache budget per compute node;
// sim uses the ConnectX-6 profile. Keys are Key's: groups of 16 neighbours
// scattered over the key space, so a 24-byte key's groups differ early and
// its neighbours only in the last byte. Every value written is unique
// (Value), so a read names the write it saw and a torn value is caught.
// Everything is seeded: a case performs the same operations on every run,
// and on sim the same history (the Deterministic case checks it).
//
// # Cases
//
// Sequential (8-byte keys and values, then 24-byte keys and 16-byte values):
// one client runs 9,000 seeded random operations on 8,192 key numbers,
// about 3,200 live keys at the end, enough to split leaves and inner nodes
// of a 1 KB-node B+-tree: half inserts (of absent keys, and of present ones,
// which must replace the value), updates and deletes of present and absent
// keys (absent: indexes.ErrNotFound), searches, and scans of 1-100 entries
// from present, absent, random, all-zero and all-ones start keys, some
// stopped early by fn returning false, a few of everything. Then it
// searches every key number and scans. Every result must equal a sorted map's.
//
// BulkLoad: 6,000 sorted keys through BulkLoad; Info must name the index,
// list its effective parameters and count memory-side bytes; the clients
// of all compute nodes between them read every key back, search absent
// keys and scan, one scan covering everything in order; then two compute
// nodes insert 2,000 keys between the loaded ones, and all check
// everything again.
//
// Linearizable (24-byte keys, 16-byte values): all 12 clients run 600
// seeded operations each (300 on local) on 16 hot keys, neighbours in one
// leaf among 1,000 loaded ones: searches, inserts, updates, deletes, plus
// inserts of fresh keys that split leaves meanwhile and searches of those.
// Each operation is stamped at call and return (Instance.Stamp: virtual
// time on sim, a shared counter on local), and porcupine checks the
// history key by key against a register that is absent or holds one value
// (update and delete of an absent key: ErrNotFound). A key that cannot be
// linearized is reported with the operations around the point where
// linearization gets stuck, and porcupine's visualization is written to a
// temporary file. Porcupine has 30 s for the whole history, shared
// equally among the keys still to check; a key it cannot decide in its
// share is unknown, not wrong: when no key is illegal but some are
// unknown, the case is skipped with their count and the reason.
//
// ScansAcrossSplits: 1,024 keys are loaded; the 4 clients of one compute
// node insert 3,072 more in random order (splitting most leaves) and now
// and then delete or update one of their own keys, while the 8 clients of
// the other two compute nodes scan 1-128 entries (one in 20: everything)
// from random starts, on sim spread over the inserts. Every key has one
// writer, and every write and scan is stamped. A scan is not atomic; what
// an index linearizable per key guarantees it, and what is checked, is:
// its keys strictly increase (sorted, no duplicates) from its start key on,
// it passes at most n entries, and, over the range it covers (start to its
// last key when it returned n entries, to the end of the key space
// otherwise), it holds only contents a key had at some instant between
// the scan's call and return (no key never inserted, none whose delete
// returned before the scan began, no value never written or overwritten
// before it began), and every key present throughout the scan (insert
// returned before the scan's call, no delete called before its return).
// Afterwards every key is searched and scanned with exact expectations.
//
// StaleCaches: compute node A warms its cache on 2,000 loaded keys
// (searches everything, scans); node B inserts 3,000 keys, splitting most
// nodes, and deletes and updates some; A must then read every key and
// scan right through its stale cache, then insert, delete and update
// through it; nodes B and C then check everything.
//
// Deletes: half of 4,000 loaded keys (every other one in key order, so
// every leaf loses entries) are deleted from all compute nodes, and
// searches and scans checked; deleted keys are deleted and updated again
// (ErrNotFound), a third re-inserted, live ones updated, and checked; every
// key is deleted and the index must be empty; keys old and new are
// inserted into the emptied index and checked.
//
// Deterministic (sim only): the Linearizable workload twice on two fresh
// clusters with the same seed must give equal event hashes
// (sim.Fabric.EventHash) and equal histories: an index must draw
// randomness from Endpoint.Rand only and depend on no map order, wall
// clock or global state.
//
// Split (paper mode only): BulkLoad, Linearizable and StaleCaches again,
// with every compute node on an index instance of its own, as when compute
// nodes are processes (dmbench computenode). The first compute node claims
// the superblock (indexes.Claim), builds and loads; then it publishes the
// index and the others attach (indexes.Env.Attach): whatever one compute
// node learns about the index reaches another only through memory and
// counted RPCs, never through a shared Go object. An index whose definition
// is shared process state (Spec.Oracle: the ideal bound) is skipped with
// its reason.
//
// Throughout, every client call is also checked against the contract of
// indexes.Client that needs no model: the index must keep none of the
// caller's key and value slices (the suite scribbles over them after each
// call), values returned stay the caller's (the last few are watched for
// changes), values and scanned keys have the configured sizes, and Scan
// calls fn at most n times and never again after it returns false.
//
// # Failures
//
// Wrong results and unexpected errors are consistency violations: a case
// prints its first 20 and the count. Every check stated above is made on
// every fabric and mode. A client that panics fails the case at once; a
// client still issuing verbs after SimClientLimit of virtual time or
// LocalClientLimit of wall time is stopped by a panic naming it (a
// livelock); the simulator reports deadlocks itself, and a local run still
// going after RunTimeout panics the test binary with every goroutine's
// stack, since clients that cannot be stopped cannot be cleaned up after.
//
// # Partitioned indexes
//
// An index whose Spec.Partitioned is true for its parameters (P-Sherman,
// P-SMART) gets Env.Partitions, the key space cut into equal ranges by
// the first eight bytes, one per compute node (Partitions), and is
// correct only while every search and write of a key comes from its
// owner, as in DEX's benchmark. The cases keep to that: Sequential uses
// the first compute node's keys; Linearizable races the hot keys on their
// owner's workers only, the others inserting and searching fresh keys of
// their own partition; ScansAcrossSplits writes keys of the writing node's
// partition; everywhere else each search or write goes to a worker of its
// key's owner (Instance.Owner). Scans still start anywhere and cross
// partitions.
//
// # Memory modes
//
// Every case runs under transport.ModePaper (64-byte cacheline atomicity,
// what the papers assume) and transport.ModeStrict (only aligned 8-byte
// words atomic). An index whose Spec.PaperMode returns a reason for its
// parameters relies on paper mode: the suite says so at the start of Run
// ("<index> [params] relies on paper mode: <reason>"), and in strict mode
// it logs that index's consistency violations ("tolerated in strict
// mode: ...", with a count per case) instead of failing; crashes,
// livelocks, deadlocks and a failed bulk load still fail. Every other
// index is held to the same checks in both modes. Which indexes rely on
// paper mode is thus declared by each index's Spec, not listed here; Run's
// first log line states it for the index under test.
//
// # Helpers for an index's own tests
//
// New builds a registered index on a fresh fabric (Options pick the
// fabric, cluster, key and value sizes and cache); Instance.Load bulk-loads
// it, Instance.GoAll adds a client per coroutine of chosen compute nodes,
// Instance.Run runs them under the deadlock and livelock bounds, and
// Instance.Stamp orders operations across clients. Key, Keys, Value and
// ValueID make the suite's keys and values. Config and NewFabric build the
// suite's cluster alone.
package indextest
