// Command go-ycsb is go-ycsb (github.com/pingcap/go-ycsb v1.0.1) with every
// dmbench index registered as a database, so that YCSB workloads run on the
// range indexes of disaggregated memory exactly as on any go-ycsb DB:
//
//	go build -o bin/go-ycsb ./cmd/go-ycsb
//	Y=$(go env GOMODCACHE)/github.com/pingcap/go-ycsb@v1.0.1/workloads   # go-ycsb's stock files
//	bin/go-ycsb load sherman -P $Y/workloada
//	bin/go-ycsb run ideal -P $Y/workloada --threads 16
//	bin/go-ycsb run dmtree -P workloads/dmtree-ycsb-a.properties -p recordcount=1000000 -p operationcount=1000000 --threads 8
//	bin/go-ycsb run chime -P $Y/workloade -p dm.compute-nodes=2 -p dm.cache-bytes=64MiB -p dm.param.span=32
//	bin/go-ycsb shell ideal
//
// The commands and flags are go-ycsb's: load, run and shell (or a unique
// prefix: lo, r, sh), the DB name, -P file (repeatable, or a comma-separated
// list), -p name=value (repeatable), --table, and for load and run
// --threads, --target (operations per second) and --interval (seconds
// between progress summaries). Flags may come before or after the DB name,
// long forms (--property_file, --prop) and attached values (-Pworkloada,
// --threads=8) work as in go-ycsb. The workload is go-ycsb's own core
// workload, its properties and its output unchanged: go-ycsb's stock
// workload files run as they are. After go-ycsb's summary, the binary prints
// dmbench's view of the same operations (see Report below).
//
// # Databases and the fabric
//
// Each index of dmbench's registry is a DB under its registry name. It runs
// on the local fabric (every node of the cluster lives in this process) or,
// with dm.fabric=tcp, on memory nodes that run as dmbench memnode
// processes, here or on other hosts; either way the compute nodes live in
// this process, and go-ycsb's threads are the compute threads. Thread i runs on compute node
// i mod dm.compute-nodes, fabric thread (i / dm.compute-nodes) mod
// dm.threads, with its own endpoint and index client; threads beyond
// dm.compute-nodes x dm.threads share fabric threads, as the coroutines of
// one thread do in dmbench's runs. The simulator cannot
// serve go-ycsb's goroutines (its clients are coroutines in virtual time);
// use `dmbench run --fabric sim` for simulated hardware.
//
// # Properties
//
// The dm.* properties set the cluster and the data's shape (-p or in a
// file); a bad value is an error naming the property and what it accepts.
//
//	dm.fabric         local or tcp (local)
//	dm.memnodes       tcp: the memory nodes' host:port, comma-separated, in node-id order
//	dm.key            tcp: the file holding the cluster key they were started with
//	dm.compute-nodes  compute nodes (1)
//	dm.threads        fabric threads per compute node (enough for one per go-ycsb thread)
//	dm.memory-nodes   memory nodes (1; with tcp, as many as dm.memnodes names)
//	dm.memory-cores   RPC cores per memory node (1)
//	dm.cache-bytes    compute-side cache per compute node, e.g. 256MiB (256MiB);
//	                  KiB/MiB/GiB are powers of 1024, KB/MB/GB powers of 1000
//	dm.mode           memory semantics: paper or strict (paper)
//	dm.seed           seed of the fabric's random sources (1)
//	dm.keysize        bytes per index key, 8-256 (24)
//	dm.valuesize      bytes per index value, 1 to 1 MiB (fieldcount*fieldlength, at most 64)
//	dm.preload        how run and shell start: bulk, insert or none (bulk for run, none for shell)
//	dm.param.<name>   an index parameter, as `dmbench list indexes` shows them
//
// dmbench's own property files (workloads/*.properties) load too; their
// dmbench-only properties (keysize, seed, zipfianconstant, partitionedkeys,
// warmupoperationcount) mean nothing to go-ycsb's core workload, which says
// so on standard error; `dmbench run` honours them.
//
// # Load and run
//
// On the tcp fabric the memory nodes outlive the process: `go-ycsb load`
// claims the memory nodes' superblock, builds the index, inserts, and
// publishes it when it closes; a later `go-ycsb run` (or shell) with the
// same cluster, index and sizes finds it published, attaches to it
// (indexes.Env.Attach) and loads nothing. Memory that holds another index,
// or the same one with other parameters or sizes, is an error naming what
// it holds: restart the memory nodes for a fresh start. An index that keeps
// state in compute-node memory (DMTree's fingerprint tables) or that the
// Expected bound's oracle defines cannot be attached from a new process,
// and says so.
//
// The local fabric and the index live only as long as the process, so a
// `go-ycsb run` finds nothing that an earlier `go-ycsb load` inserted. A run
// there (and on tcp when the memory nodes hold no index) therefore loads the
// records of go-ycsb's load phase itself, unmeasured, publishes them on tcp,
// and then resets dmbench's counters. With dm.preload=bulk (the default) it
// bulk-loads them, as `dmbench run` and the papers preload: the keys go-ycsb
// names (keyprefix, the record numbers from insertstart on, FNV-1a-hashed
// unless insertorder=ordered, zeropadding), sorted, each field fieldlength
// random letters. With dm.preload=insert it runs go-ycsb's load phase on
// --threads threads, the core workload's own inserts with its own keys and
// values; dataintegrity=true needs those and makes insert the default.
// `load` measures the inserts; dm.preload=none starts a run or a shell
// empty.
//
// # Keys and values
//
// A go-ycsb key ("user6284781860667377211": the prefix and a number, at most
// 23 bytes with go-ycsb's defaults) becomes a dm.keysize-byte index key by
// zero padding on the right. Padding keeps go-ycsb's string order, so a scan
// from a key visits what go-ycsb means. A longer key, or a keyprefix and
// zeropadding that make one, is an error naming dm.keysize; so are the
// empty key, a key ending in a NUL byte and an all-0xff key, which padding
// or the indexes' sentinels would confuse.
//
// A record is stored as one dm.valuesize-byte value: field i (go-ycsb's
// "field<i>", i < fieldcount) at offset i*fieldlength, cut to fieldlength
// bytes, zero-padded, and the whole cut to dm.valuesize. Reading a field
// returns its slot with trailing NUL bytes removed; an empty slot, or one
// beyond dm.valuesize, is absent from the result. By default dm.valuesize
// is fieldcount*fieldlength up to 64 bytes: the papers store 8-byte values
// and go up to 128-byte key-value pairs, and go-ycsb's stock 10 x 100-byte
// records would measure copying rather than the index. With the stock
// files, then, field0 keeps its first 64 bytes and the other fields are not
// stored; raise dm.valuesize to keep them (dataintegrity=true requires it).
//
// READ is one index search and fails when the key is absent (go-ycsb counts
// READ_ERROR; its Zipfian draws can land one past the last record). UPDATE
// is one index update, so that it costs what the index's update costs: it
// replaces the whole value, and fields the update does not carry read back
// as absent (go-ycsb's writeallfields=false updates one field). UPDATE and
// DELETE of an absent key fail. INSERT is the index's insert, which
// replaces the value of a present key. SCAN is an index scan of up to the
// requested number of records. The table name is ignored: an index is one
// key space.
//
// # Report
//
// Closing the DB prints dmbench's view after go-ycsb's: per operation type,
// the operations, the verbs per operation (in total and per kind: read,
// write, cas, masked_cas, faa, rpc) and the payload bytes per operation,
// attributed through the endpoints' tags; then per node its role, NIC
// messages, RPCs served and payload bytes each way; then the index's
// memory-side bytes, compute-side cache and cache hit ratio. The TOTAL row
// also counts verbs outside any operation (RPC handlers, client setup), as
// dmbench's results do. The counts cover every operation that reached the
// index, failed ones included (a line after the table says how many of each
// type failed: go-ycsb lists them apart as READ_ERROR, UPDATE_ERROR, ...),
// and any go-ycsb warm-up (warmuptime), which go-ycsb leaves out of its own
// summary.
//
// # Differences from go-ycsb
//
// Exit status: 1 for bad input or a failed or interrupted run, 2 for a
// command line that does not parse (go-ycsb exits 0 after printing usage).
// Problems go-ycsb meets with a panic, an exit or silence are errors before
// anything runs: fewer operations than threads, a measurement.interval
// below one second, an unknown measurementtype or outputstyle, and a
// malformed recordcount, operationcount, insertcount, threadcount,
// fieldcount or fieldlength, which go-ycsb's getters replace by the
// default. The properties are printed sorted, and shell rows
// by field name. The debug.pprof server is not started. The shell reads
// plain lines (no line editing); go-ycsb's shell -p splits values on commas
// and so does this one. Like go-ycsb, the core workload seeds itself from
// the clock: runs are not repeatable; `dmbench run` is.
package main
