// Package fabrictest is the semantics suite every fabric passes: the
// behaviour of the verbs API that index code may rely on, whatever runs
// underneath. A fabric's tests call Run with a constructor:
//
//	func TestFabric(t *testing.T) {
//		fabrictest.Run(t, func(t *testing.T, cfg transport.Config) transport.Fabric {
//			f, err := local.New(cfg)
//			if err != nil {
//				t.Fatal(err)
//			}
//			return f
//		})
//	}
//
// Run repeats every case under transport.ModePaper and transport.ModeStrict.
// Each case builds its own small cluster (one or two memory nodes of a few
// MiB with a 64 KiB device region, one or two compute nodes of a few
// threads), adds clients with Go and runs them with Run; the fabric is closed
// when the case ends. Clients report failures with t.Errorf, never t.Fatal,
// because they may run on goroutines or coroutines other than the test's.
// No case depends on timing.
//
// # What the suite fixes
//
// Memory: a READ returns the bytes last written, at any offset and length,
// on memory nodes, device regions, regions added to compute nodes and the
// caller's own node. Words are little-endian; CAS, masked CAS (ConnectX
// extended semantics, transport.Op.Apply) and FAA return the old value
// whether or not they change the word.
//
// Batches: Post runs its ops in order (a READ after a WRITE of the same
// bytes sees it), leaves each atomic's old value in ops[i].Old, and
// completes batches longer than any per-QP limit on outstanding READs and
// atomics. A batch holding an op with a bad address returns that op's error
// and none of its ops takes effect.
//
// Errors: a nil address, an address outside every region (including one on
// a node that does not exist), an access running past the end of its region
// and a misaligned atomic fail with a *transport.AddrError, through single
// verbs and through Post (possibly wrapped), whose message names the
// address and, when the access started inside a region, that region.
//
// RPC: a handler's error reaches the caller wrapped (errors.Is sees
// through it, so transport.ErrOutOfMemory survives the chunk RPC); an
// unknown method and a node that does not exist are errors naming them; a
// handler runs on an endpoint of the node it serves and can read that
// node's memory; no more handlers of a node run at once than its cores.
//
// Statistics, per tag in force when a verb is issued and per target node:
//
//	READ        Count 1, BytesOut 0,        BytesIn len(dst)
//	WRITE       Count 1, BytesOut len(src), BytesIn 0
//	CAS, masked CAS, FAA
//	            Count 1, BytesOut 8,        BytesIn 8 (operand out, old value back)
//	RPC         Count 1, BytesOut len(req), BytesIn len(reply)
//
// Doorbells counts one per single verb (an RPC included) and one per Post,
// whatever its length. Verbs rejected for their address count nothing.
// Setup endpoints count nothing. ResetStats zeroes every counter. Per node,
// Stats has one NodeStats per node with its id, its cores and (compute
// nodes) its threads, counts the RPCs its handlers served, and reports at
// least the payload bytes each node sent and received (a fabric may add
// header bytes).
//
// Lifecycle: Run may be called again with clients added since; a client's
// panic makes Run return an error holding the panic value, and the fabric
// runs later clients normally. Setup endpoints apply verbs and RPCs at
// once, outside any run. Endpoints draw the same random numbers for the same
// config, seed and sequence of Go calls.
package fabrictest
