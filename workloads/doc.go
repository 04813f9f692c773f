// Package workloads holds the YCSB-style workloads of every paper dmbench
// reproduces, as go-ycsb property files, and turns one into a seeded,
// deterministic stream of operations per client.
//
// # Property files
//
// Each *.properties file in this folder is one workload of one paper (DEX
// Table 1, DMTree section 5.1, RF-tree Table 1, Dolphin section IV-A) or one
// of YCSB's core workloads A-F; a comment at its top cites its source. They
// are embedded in the package (Builtins, Builtin) and can be loaded from disk
// (Load) like go-ycsb's -P files, with -p style overrides on top
// (ParseOverrides). Values are the papers' own (record and operation counts
// included); experiments scale them down with overrides.
//
// The property names are go-ycsb's (package pkg/prop): recordcount,
// operationcount, readproportion, updateproportion, insertproportion,
// scanproportion, readmodifywriteproportion, requestdistribution (uniform,
// zipfian, latest, hotspot, sequential), hotspotdatafraction,
// hotspotopnfraction, maxscanlength, scanlengthdistribution (uniform,
// zipfian, and dmbench's constant: every scan reads exactly maxscanlength
// records, as DEX's do), fieldcount and fieldlength. dmbench adds
// zipfianconstant (go-ycsb hard-codes 0.99), seed, keysize,
// partitionedkeys with insertanywhere and partitionfold (see Partitioned
// keys), keyedupdates (every update of a key writes one value derived from
// the key, as DEX's benchmark does), warmupreadall (read every loaded
// record before the run: true, once in the cluster; pernode, once on
// every compute node, as DMTree's artifact warms each server's cache),
// warmupoperationcount (the operations a run executes before it measures;
// DEX runs 10 M) and insertsplit (see Streams). go-ycsb's
// insertorder (hashed, ordered, or dmbench's permuted) chooses the key
// encoding (see Keys).
//
// The other go-ycsb core properties (workload, db, table, threadcount,
// readallfields, writeallfields, dotransactions, measurement and output
// settings, ...) are accepted so that go-ycsb's own files load, and are
// checked for type, but they do not change the stream; the runner, not the
// workload, decides threads and measurement. Three of them must keep the
// one value dmbench implements: workload=core, fieldlengthdistribution=constant,
// and insertstart=0 with insertcount=recordcount (dmbench bulk-loads every
// record in one piece). Anything else is an error that
// names the file, the property and what is accepted; misspelt names get a
// suggestion.
//
// Defaults are go-ycsb's (readproportion 0.95, updateproportion 0.05,
// fieldcount 10, fieldlength 100, maxscanlength 1000, uniform requests), so
// go-ycsb's stock files mean here what they mean there. Unlike go-ycsb, the
// five proportions must add up to 1: go-ycsb silently normalises them, which
// turns "readproportion=1" (with the 0.05 update default still in force)
// into 95% reads. A record's value is fieldcount*fieldlength bytes; the
// papers' workloads use one 8-byte field.
//
// # Keys
//
// Record number i (0 <= i < recordcount are bulk-loaded, later numbers are
// inserted) has a key number, and its key carries that number big-endian.
// insertorder chooses the mapping.
//
// insertorder=hashed (the default) gives record i the key
//
//	bytes [0, 8):       big-endian mix(i+1)
//	bytes [8, keysize): filler drawn from a SplitMix64 sequence seeded by mix(i+1)
//
// where mix is SplitMix64's finaliser, a bijection on 64-bit words with
// mix(x) = 0 only for x = 0. This is go-ycsb's insertorder=hashed (the key of
// record i is a hash of i) with a bijective hash instead of FNV-1a, so
// distinct records can never share a key and hot records are scattered over
// the key space. Byte order is key order and the first eight bytes alone
// decide it. Neither the all-zero nor the all-ones key occurs (their
// prefixes belong to record numbers of 2^63 and above), so an index may use
// them as minimum and maximum sentinels. The key set does not depend on the
// seed: seeds change the operations, not the data.
//
// insertorder=ordered gives record i the key number i+1 (so that the
// all-zero key stays free), zero-padded in front:
//
//	bytes [0, keysize-8):       zero
//	bytes [keysize-8, keysize): big-endian i+1
//
// Byte order is record order, and consecutive records share every byte but
// the last (but the last two, every 256 records): the dense integer keys
// Dolphin's leaves are built for (one leaf group per 7-byte prefix), and
// what DMTree's artifact uses for scans (its zero-padded decimal strings
// share the same property). The all-ones key would take record 2^64-2,
// far above any record number. Zipfian ranks are record numbers, so the
// hottest records are the smallest keys, as in Dolphin's benchmark, which
// uses the rank as the key; inserts take the numbers past the loaded
// records, so they all land right of them.
//
// insertorder=permuted (a dmbench addition; go-ycsb has no such order)
// keeps the keys dense but scatters the records among them, as DEX's
// benchmark does with (CityHash64(rank)+1) mod keyspace, its key space
// only as large as the loaded and inserted keys. The key space is the
// numbers 1 to S, where S is recordcount plus the inserts the run is
// expected to make (insertproportion times the warm-up and measured
// operations) with a quarter and 1024 to spare; record i gets the number
// P(i)+1, where P is a fixed pseudo-random permutation of [0, S) (a Feistel
// network with cycle walking). The key is laid out as an ordered one. Hot
// records are scattered, loaded keys leave gaps that inserts fill (about
// 80% of the space is loaded and inserted by the end of a run), and a range
// of the key space holds as many records as its width suggests, which
// radix trees such as SMART, whose scans enumerate key ranges, depend on.
// Records past S (a run that inserts more than expected) take the numbers
// above S in order.
//
// Which workloads use which encoding, and why, is in each property file's
// header: Dolphin's and DMTree's scan workloads are ordered, DEX's and
// Dolphin's YCSB A and C permuted, the rest hashed.
//
// Records enumerates the bulk-load records in key order without holding
// them all: for hashed keys it sweeps the record numbers once per slice of
// the key space and sorts only that slice (about 4 Mi keys at a time);
// ordered keys come in record order, permuted ones by walking the key
// space and inverting the permutation.
//
// # Streams
//
// Spec.Stream builds the operation stream of one Client, identified by its
// compute node among the cluster's compute nodes and its index among all the
// cluster's clients (Cluster numbers them node by node). Operations, keys,
// scan lengths and values come from go-ycsb's pkg/generator driven by a
// PCG generator seeded from (seed, client index); nothing reads the clock,
// so the same spec, seed and client give the same operations.
//
// Reads, updates, scans and read-modify-writes pick an existing record:
//
//   - uniform: generator.Uniform over the loaded records;
//   - zipfian: generator.Zipfian over exactly the loaded records with
//     zipfianconstant, rank r being record r (the key mapping already
//     scatters hot records), as DEX's benchmark draws a Zipfian over its
//     key space. go-ycsb's ScrambledZipfian instead draws over ten billion
//     items hashed onto the records (a flatter head: 3.8% for the hottest
//     item), and for constants other than 0.99 sums zeta over all ten
//     billion. The zeta constant is computed once per process, record count
//     and constant: term by term in go-ycsb's order up to 65,536 items, with
//     an Euler-Maclaurin tail beyond, so a client's generator costs nothing
//     to build. Draws one past the last record, which the generator can
//     return, are drawn again;
//   - hotspot: generator.Hotspot with hotspotdatafraction and
//     hotspotopnfraction;
//   - sequential: generator.Sequential over the loaded records, each client
//     starting at its own offset (client i of T at record i*N/T), so the
//     clients walk disjoint stretches as go-ycsb's threads do with their
//     shared counter;
//   - latest: a Zipfian offset back from the newest record this client
//     knows of, which is its own latest insert or else the last loaded
//     record. go-ycsb's SkewedLatest follows a counter shared by all threads,
//     which a deterministic client cannot see, and sums zeta over every
//     record on each construction; the offset's Zipfian spans the loaded
//     records and uses zipfianconstant.
//
// Inserts take new record numbers: client i of T inserts records
// recordcount+i, recordcount+i+T, recordcount+i+2T, ..., so no two clients
// insert the same key, no insert hits a loaded key, and no client waits for
// another. With insertsplit=chunked (a dmbench addition) client i instead
// inserts its own contiguous run, recordcount+i*C, recordcount+i*C+1, ...,
// where C is the most operations a client issues (its share of the warm-up
// plus its share of the measured phase): under ordered keys the clients
// then append side by side in T places of the key space rather than all at
// its newest end. That is how a load split over client processes with
// YCSB's insertstart and insertcount runs, and how Dolphin's benchmark
// feeds each client one contiguous piece of a YCSB workload file. With
// insertsplit=uniform each insert draws its record uniformly from twice
// the loaded records (a hash of the seed, the client and the position): a
// loaded record, whose value the insert replaces, about half the time, and
// otherwise a new key anywhere above the loaded ones, possibly one another
// client also inserts. That is how Dolphin's benchmarks (test/benchmark.cpp,
// test/range_query.cpp) draw insert keys over an integer key space whose
// lower half they warmed up; the draw is uniform whatever
// requestdistribution says. Other clients' inserts are never read (a
// stream cannot know when they happen), so every read, update and scan
// targets a record that exists.
//
// # Partitioned keys
//
// With partitionedkeys=true the stream of compute node c of C only touches
// keys in partition c: the c-th of C equal, contiguous ranges of the 64-bit
// key prefix space for hashed keys, of the loaded records for ordered
// keys, or of the key space for permuted ones (Spec.Partitions gives their boundaries as keys, to hand to a
// partitioned index such as DEX). Ordered inserts all fall in the last
// partition, so ordered keys with inserts are partitioned only over one
// compute node; other nodes' streams are refused with the reason. Records
// of other partitions are drawn again and insert numbers outside the
// partition are skipped, so each node's requests follow the global
// distribution restricted to its range. With permuted keys the clients of
// a node share one insert sequence over all numbers past the loaded
// records (the other nodes take the numbers it skips), so the inserts stay
// inside the key space sized for them. With insertanywhere=true only the
// operations on existing records stay in the partition and every insert
// takes the client's next number wherever its key falls: DMTree's
// benchmark (benchmarks/ycsbc.cc of its artifact) remaps only non-insert
// keys into a compute node's range, which is how its shared-nothing dLSM
// runs; ordered keys with inserts then partition over every node.
// This is what DEX's benchmark (test/newbench.cpp of its artifact) does with
// GLOBAL_WORKLOAD defined, as it is in the published file: a global
// Zipfian whose keys outside the node's range are drawn again. Its other
// build draws a separate Zipfian per partition, which has the same shape.
// Each draw costs about C generator calls.
//
// DMTree's benchmark instead maps every key it draws into the node's
// range (ycsbc.cc: the key modulo the node's share of the loaded keys,
// plus the range's start), so each node sees the whole distribution
// folded onto its range: under Zipfian its hottest key takes a few
// percent of its requests, where the global distribution cut to one
// range can give the range holding the global top keys a third or more
// on one key. partitionfold=true does that: with ordered keys by the
// artifact's formula over the partition's contiguous loaded records; with
// hashed or permuted keys, whose partitions scatter over the record
// numbers, a record drawn outside the partition becomes the first loaded
// record inside it from a position hashed from the record, which folds
// about C records onto each of the partition's as the modulo does.
//
// # Traces
//
// tracefile=PATH replays a Twitter cache trace (twitter/cache-trace, Yang
// et al., OSDI 2020; Dolphin Figure 9) instead of drawing operations. A
// trace file is CSV, one request per line (timestamp, anonymized key, key
// size, value size, client id, operation, TTL), plain or zstd-compressed
// (recognised by the zstd magic number, whatever the name). Only the lines
// a run replays are read:
//
//   - the first recordcount lines are the load: every key they name is
//     bulk-loaded, except keys whose last request there is a delete;
//   - the next warmupoperationcount lines are the warm-up, the next
//     operationcount lines the measured phase. get and gets read;
//     set, add, replace, cas, append, prepend, incr and decr insert when
//     the key is not in the index at that point of the trace and update it
//     otherwise; delete deletes. Which it is is decided in trace order, as
//     the file is read, so it does not depend on how clients interleave.
//
// Line j of the warm-up (and of the measured lines) goes to client j mod
// the number of clients: each client gets exactly its share of either
// phase, in trace order, and the split is a function of the line numbers
// alone. A request racing another client's insert of the same key can
// miss; the runner counts that as failed, as go-ycsb does.
//
// Keys follow insertorder. ordered numbers the trace's distinct keys 1, 2,
// 3, ... in the order the trace first names them and encodes the number
// as an ordered key (dense keys); hashed takes the 64-bit FNV-1a hash of
// the key string (0 and 2^64-1 move one step inward) and encodes it as a
// hashed key's prefix. Key and value sizes in the trace are not used: the
// index's keys are keysize bytes and its values fieldcount*fieldlength.
// Proportions and distributions are not used either; partitionedkeys and
// warmupreadall are refused. Spec.TraceMissing says which file to fetch
// when it is absent. The traces are not shipped: scripts/gen-twitter-fixture
// writes synthetic files in the same format (not real data) for tests and
// trial runs.
package workloads
