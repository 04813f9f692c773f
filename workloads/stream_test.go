package workloads

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// ownedOp is an Op whose slices the test owns.
type ownedOp struct {
	Type       OpType
	Key, Value string
	ScanLength int
}

func mustStream(t testing.TB, s *Spec, c Client) *Stream {
	t.Helper()
	st, err := s.Stream(c)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func take(t testing.TB, s *Spec, c Client, n int) []ownedOp {
	t.Helper()
	st := mustStream(t, s, c)
	ops := make([]ownedOp, n)
	for i := range ops {
		op := st.Next()
		ops[i] = ownedOp{op.Type, string(op.Key), string(op.Value), op.ScanLength}
	}
	return ops
}

// builtinSmall loads a shipped workload scaled down to records records.
func builtinSmall(t testing.TB, name string, records int, extra Properties) *Spec {
	t.Helper()
	overrides := Properties{"recordcount": strconv.Itoa(records)}
	for k, v := range extra {
		overrides[k] = v
	}
	s, err := Builtin(name, overrides)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var solo = Client{Node: 0, Nodes: 1, Index: 0, Total: 1}

func TestOperationMixFollowsTheProportions(t *testing.T) {
	const n = 100_000
	names := []string{"dex-read-intensive", "dex-insert-intensive", "dex-scan-intensive", "dmtree-ycsb-f", "workloadd", "rftree-load-a"}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			s := builtinSmall(t, name, 10_000, nil)
			if name == "rftree-load-a" {
				s = builtinSmall(t, name, 0, nil)
			}
			var counts [5]int
			st := mustStream(t, s, Client{Node: 1, Nodes: 2, Index: 3, Total: 4})
			for range n {
				counts[st.Next().Type]++
			}
			for op, want := range s.mix() {
				if got := float64(counts[op]) / n; math.Abs(got-want) > 0.01 {
					t.Errorf("%v: %.4f of the operations, want %.2f", OpType(op), got, want)
				}
			}
		})
	}
}

func TestOpsCarryWhatTheirTypeNeeds(t *testing.T) {
	s := specWith(t, Properties{"readproportion": "0.2", "updateproportion": "0.2", "insertproportion": "0.2",
		"scanproportion": "0.2", "readmodifywriteproportion": "0.2", "fieldlength": "13", "keysize": "24"})
	st := mustStream(t, s, solo)
	for range 10_000 {
		op := st.Next()
		if len(op.Key) != 24 {
			t.Fatalf("%v with a key of %d bytes, want 24", op.Type, len(op.Key))
		}
		writes := op.Type == Insert || op.Type == Update || op.Type == ReadModifyWrite
		if writes != (len(op.Value) == 13) || (!writes && op.Value != nil) {
			t.Fatalf("%v with a value of %d bytes", op.Type, len(op.Value))
		}
		if (op.Type == Scan) != (op.ScanLength > 0) {
			t.Fatalf("%v with scan length %d", op.Type, op.ScanLength)
		}
	}
}

func TestStreamsAreDeterministic(t *testing.T) {
	const n = 2000
	c := Client{Node: 1, Nodes: 2, Index: 5, Total: 8}
	for _, run := range []struct{ dist, order string }{
		{"uniform", "hashed"}, {"zipfian", "hashed"}, {"latest", "hashed"}, {"hotspot", "hashed"}, {"sequential", "hashed"},
		{"zipfian", "ordered"}, {"latest", "ordered"},
	} {
		dist := run.dist
		t.Run(dist+"/"+run.order, func(t *testing.T) {
			props := Properties{"requestdistribution": dist, "insertorder": run.order}
			s := builtinSmall(t, "dex-scan-intensive", 5000, props)
			a := take(t, s, c, n)
			// Another client in between must not disturb the first.
			take(t, s, Client{Node: 0, Nodes: 2, Index: 0, Total: 8}, n)
			if b := take(t, s, c, n); !slices.Equal(a, b) {
				t.Error("the same spec, seed and client gave different operations")
			}
			props["seed"] = "2"
			other := take(t, builtinSmall(t, "dex-scan-intensive", 5000, props), c, n)
			if differ := differing(a, other); differ < n/2 {
				t.Errorf("seed 2 changed only %d of %d operations", differ, n)
			}
			neighbour := take(t, s, Client{Node: 1, Nodes: 2, Index: 6, Total: 8}, n)
			if differ := differing(a, neighbour); differ < n/2 {
				t.Errorf("the next client shares %d of %d operations", n-differ, n)
			}
		})
	}
}

func differing(a, b []ownedOp) int {
	d := 0
	for i := range a {
		if a[i] != b[i] {
			d++
		}
	}
	return d
}

// recordOf maps the keys of records [0, n) back to their numbers.
func recordOf(s *Spec, n int64) map[string]int64 {
	m := make(map[string]int64, n)
	for rec := range n {
		m[string(s.Key(rec))] = rec
	}
	return m
}

// topShare is the share of the accesses that go to the 1% most accessed keys.
func topShare(counts map[string]int, keys int) float64 {
	freq := make([]int, 0, len(counts))
	total := 0
	for _, c := range counts {
		freq = append(freq, c)
		total += c
	}
	slices.Sort(freq)
	slices.Reverse(freq)
	top := 0
	for _, c := range freq[:min(keys/100, len(freq))] {
		top += c
	}
	return float64(top) / float64(total)
}

func TestSkew(t *testing.T) {
	const records, n = 100_000, 100_000
	cases := []struct {
		props    Properties
		min, max float64 // bounds on the share of the top 1% of keys
	}{
		{Properties{"requestdistribution": "zipfian"}, 0.4, 1},
		{Properties{"requestdistribution": "zipfian", "zipfianconstant": "0.5"}, 0.02, 0.15},
		{Properties{"requestdistribution": "uniform"}, 0, 0.1},
		{Properties{"requestdistribution": "zipfian", "partitionedkeys": "true"}, 0.4, 1},
	}
	for _, c := range cases {
		t.Run(c.props["requestdistribution"]+"/"+c.props["zipfianconstant"]+c.props["partitionedkeys"], func(t *testing.T) {
			s := builtinSmall(t, "dex-read-only", records, c.props)
			counts := map[string]int{}
			st := mustStream(t, s, Client{Node: 2, Nodes: 4, Index: 2, Total: 4})
			for range n {
				counts[string(st.Next().Key)]++
			}
			if share := topShare(counts, records); share < c.min || share > c.max {
				t.Errorf("the top 1%% of keys got %.3f of the reads, want %.2f to %.2f", share, c.min, c.max)
			}
		})
	}
	t.Run("hotspot", func(t *testing.T) {
		s := builtinSmall(t, "dex-read-only", 10_000, Properties{"requestdistribution": "hotspot",
			"hotspotdatafraction": "0.1", "hotspotopnfraction": "0.9"})
		recs := recordOf(s, s.RecordCount)
		st := mustStream(t, s, solo)
		hot := 0
		for range n {
			if recs[string(st.Next().Key)] < s.RecordCount/10 {
				hot++
			}
		}
		if share := float64(hot) / n; math.Abs(share-0.9) > 0.01 {
			t.Errorf("the hot 10%% of records got %.3f of the reads, want 0.9", share)
		}
	})
}

// TestReadsTargetExistingRecords checks every distribution: reads, updates,
// scans and read-modify-writes only ever name loaded records or records the
// same client inserted before.
func TestReadsTargetExistingRecords(t *testing.T) {
	for _, dist := range []string{"uniform", "zipfian", "latest", "hotspot", "sequential"} {
		for _, partitioned := range []string{"false", "true"} {
			t.Run(dist+"/partitioned="+partitioned, func(t *testing.T) {
				s := builtinSmall(t, "dex-insert-intensive", 2000, Properties{"requestdistribution": dist, "partitionedkeys": partitioned})
				exists := recordOf(s, s.RecordCount)
				st := mustStream(t, s, Client{Node: 1, Nodes: 3, Index: 4, Total: 6})
				for i := range 20_000 {
					op := st.Next()
					if op.Type == Insert {
						exists[string(op.Key)] = -1
					} else if _, ok := exists[string(op.Key)]; !ok {
						t.Fatalf("operation %d: %v of %x, which neither the load nor this client created", i, op.Type, op.Key)
					}
				}
			})
		}
	}
}

func TestLatestFavoursRecentInserts(t *testing.T) {
	const records, n = 10_000, 20_000
	newest := func(dist string) float64 {
		s := builtinSmall(t, "workloadd", records, Properties{"requestdistribution": dist})
		position := recordOf(s, records) // loaded record i is the i-th known record
		known := int64(records)
		st := mustStream(t, s, solo)
		recent, reads := 0, 0
		for range n {
			op := st.Next()
			if op.Type == Insert {
				position[string(op.Key)] = known
				known++
				continue
			}
			reads++
			if position[string(op.Key)] >= known-100 {
				recent++
			}
		}
		return float64(recent) / float64(reads)
	}
	if share := newest("latest"); share < 0.4 {
		t.Errorf("latest: %.3f of the reads hit the 100 newest records, want over 0.4", share)
	}
	if share := newest("uniform"); share > 0.05 {
		t.Errorf("uniform: %.3f of the reads hit the 100 newest records, want under 0.05", share)
	}
}

func TestSequentialWalksRecordsFromEachClientsOffset(t *testing.T) {
	s := builtinSmall(t, "dex-read-only", 1000, Properties{"requestdistribution": "sequential"})
	recs := recordOf(s, s.RecordCount)
	for _, c := range []struct {
		client Client
		first  int64 // go-ycsb's Sequential skips its first value until it wraps
	}{
		{Client{Node: 0, Nodes: 1, Index: 0, Total: 2}, 1},
		{Client{Node: 0, Nodes: 1, Index: 1, Total: 2}, 501},
	} {
		st := mustStream(t, s, c.client)
		for i := range int64(2500) {
			if got, want := recs[string(st.Next().Key)], (c.first+i)%s.RecordCount; got != want {
				t.Fatalf("client %d, read %d: record %d, want %d", c.client.Index, i, got, want)
			}
		}
	}
}

func TestScanLengths(t *testing.T) {
	for _, c := range []struct {
		dist              Distribution
		minMean, maxMean  float64
		shortest, longest int
	}{
		{Uniform, 48, 53, 1, 100},
		{Zipfian, 1, 30, 1, 100},
		{Constant, 100, 100, 100, 100},
	} {
		t.Run(string(c.dist), func(t *testing.T) {
			s := builtinSmall(t, "dmtree-scan-only", 10_000, Properties{"scanlengthdistribution": string(c.dist)})
			st := mustStream(t, s, solo)
			shortest, longest, sum := math.MaxInt, 0, 0
			const n = 50_000
			for range n {
				l := st.Next().ScanLength
				shortest, longest, sum = min(shortest, l), max(longest, l), sum+l
			}
			if shortest != c.shortest || longest != c.longest {
				t.Errorf("lengths from %d to %d, want %d to %d", shortest, longest, c.shortest, c.longest)
			}
			if mean := float64(sum) / n; mean < c.minMean || mean > c.maxMean {
				t.Errorf("mean length %.1f, want %.0f to %.0f", mean, c.minMean, c.maxMean)
			}
		})
	}
}

func TestPartitionedKeysStayInTheirRange(t *testing.T) {
	clients, err := Cluster(4, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, dist := range []string{"uniform", "zipfian", "latest", "hotspot", "sequential"} {
		t.Run(dist, func(t *testing.T) {
			s := builtinSmall(t, "dex-insert-intensive", 20_000, Properties{"requestdistribution": dist, "partitionedkeys": "true"})
			ranges, err := s.Partitions(4)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range clients {
				st := mustStream(t, s, c)
				for i := range 3000 {
					if op := st.Next(); !ranges[c.Node].Contains(op.Key) {
						t.Fatalf("client %d of node %d, operation %d: %v of %x, outside the node's range [%x, %x)",
							c.Index, c.Node, i, op.Type, op.Key, ranges[c.Node].Start, ranges[c.Node].End)
					}
				}
			}
		})
	}
	t.Run("unpartitioned roams", func(t *testing.T) {
		s := builtinSmall(t, "dex-insert-intensive", 20_000, nil)
		ranges, _ := s.Partitions(4)
		hit := map[int]bool{}
		st := mustStream(t, s, clients[0])
		for range 1000 {
			key := st.Next().Key
			for p, r := range ranges {
				if r.Contains(key) {
					hit[p] = true
				}
			}
		}
		if len(hit) != 4 {
			t.Errorf("node 0 touched partitions %v without partitionedkeys, want all 4", hit)
		}
	})
}

func TestInsertsAreNewAndUnique(t *testing.T) {
	for _, c := range []struct {
		name  string
		props Properties
	}{
		{"dmtree-insert-only", nil},
		{"dex-insert-intensive", Properties{"partitionedkeys": "true"}},
		{"rftree-load-a", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			records := 5000
			if c.name == "rftree-load-a" {
				records = 0
			}
			s := builtinSmall(t, c.name, records, c.props)
			loaded := map[string]bool{}
			recs, err := s.Records()
			if err != nil {
				t.Fatal(err)
			}
			for key := range recs {
				loaded[string(key)] = true
			}
			clients, err := Cluster(3, 3)
			if err != nil {
				t.Fatal(err)
			}
			inserted := map[string]int{}
			for _, cl := range clients {
				st := mustStream(t, s, cl)
				for range 1000 {
					op := st.Next()
					if op.Type != Insert {
						continue
					}
					if loaded[string(op.Key)] {
						t.Fatalf("client %d inserts %x, a loaded key", cl.Index, op.Key)
					}
					if by, dup := inserted[string(op.Key)]; dup {
						t.Fatalf("clients %d and %d both insert %x", by, cl.Index, op.Key)
					}
					inserted[string(op.Key)] = cl.Index
				}
			}
			if len(inserted) == 0 {
				t.Fatal("no inserts")
			}
		})
	}
}

func TestClientsAndShares(t *testing.T) {
	clients, err := Cluster(3, 4)
	if err != nil {
		t.Fatal(err)
	}
	const ops = 1_000_003
	total := int64(0)
	for i, c := range clients {
		if c.Index != i || c.Node != i/4 || c.Nodes != 3 || c.Total != 12 {
			t.Errorf("client %d is %+v", i, c)
		}
		share := c.Share(ops)
		if share != ops/12 && share != ops/12+1 {
			t.Errorf("client %d: share %d of %d operations over 12 clients", i, share, ops)
		}
		total += share
	}
	if total != ops {
		t.Errorf("shares add up to %d, want %d", total, ops)
	}
	if _, err := Cluster(0, 4); err == nil {
		t.Error("Cluster(0, 4) succeeded")
	}
	s := specWith(t, nil)
	for _, bad := range []Client{{}, {Node: 2, Nodes: 2, Total: 1}, {Nodes: 1, Index: 3, Total: 3}, {Nodes: 1, Index: -1, Total: 3}} {
		if _, err := s.Stream(bad); err == nil {
			t.Errorf("Stream(%+v) succeeded", bad)
		}
	}
}

func TestStreamRejectsEmptyPartitions(t *testing.T) {
	s := specWith(t, Properties{"recordcount": "3", "partitionedkeys": "true"})
	counts := partitionRecords(s, 64)
	empty := slices.Index(counts, 0)
	_, err := s.Stream(Client{Node: empty, Nodes: 64, Index: empty, Total: 64})
	if err == nil || !strings.Contains(err.Error(), "holds none of the 3 records") {
		t.Errorf("Stream for an empty partition = %v, want an error", err)
	}
	full := slices.IndexFunc(counts, func(n int64) bool { return n > 0 })
	if _, err := s.Stream(Client{Node: full, Nodes: 64, Index: full, Total: 64}); err != nil {
		t.Errorf("Stream for a partition with records: %v", err)
	}
}

func TestOrderedPartitionedInsertsNeedTheLastNode(t *testing.T) {
	s := specWith(t, Properties{"recordcount": "100", "insertorder": "ordered", "partitionedkeys": "true",
		"readproportion": "0.5", "insertproportion": "0.5"})
	_, err := s.Stream(Client{Node: 0, Nodes: 2, Index: 0, Total: 2})
	if err == nil || !strings.Contains(err.Error(), "in the last partition") {
		t.Errorf("ordered, partitioned inserts on node 0 of 2: error %v, want one about the last partition", err)
	}
	st, err := s.Stream(Client{Node: 1, Nodes: 2, Index: 1, Total: 2})
	if err != nil {
		t.Fatal(err)
	}
	parts, err := s.Partitions(2)
	if err != nil {
		t.Fatal(err)
	}
	for range 200 {
		if op := st.Next(); !parts[1].Contains(op.Key) {
			t.Fatalf("%s of key %x outside the last partition %x", op.Type, op.Key, parts[1])
		}
	}
	ro := specWith(t, Properties{"recordcount": "100", "insertorder": "ordered", "partitionedkeys": "true"})
	for node := range 2 {
		st, err := ro.Stream(Client{Node: node, Nodes: 2, Index: node, Total: 2})
		if err != nil {
			t.Fatal(err)
		}
		for range 200 {
			if op := st.Next(); !parts[node].Contains(op.Key) {
				t.Fatalf("node %d: %s of key %x outside its partition", node, op.Type, op.Key)
			}
		}
	}
}

// With insertanywhere, ordered inserts run on every node of a partitioned
// cluster, the other operations stay in the node's range, and no two
// clients insert one key.
func TestInsertAnywhere(t *testing.T) {
	s := specWith(t, Properties{"recordcount": "100", "insertorder": "ordered", "partitionedkeys": "true",
		"insertanywhere": "true", "readproportion": "0.5", "insertproportion": "0.5"})
	parts, err := s.Partitions(2)
	if err != nil {
		t.Fatal(err)
	}
	inserted := map[string]bool{}
	for node := range 2 {
		st, err := s.Stream(Client{Node: node, Nodes: 2, Index: node, Total: 2})
		if err != nil {
			t.Fatal(err)
		}
		for range 200 {
			op := st.Next()
			if op.Type == Insert {
				if inserted[string(op.Key)] {
					t.Fatalf("key %x inserted twice", op.Key)
				}
				inserted[string(op.Key)] = true
			} else if !parts[node].Contains(op.Key) {
				t.Fatalf("node %d: %s of key %x outside its partition", node, op.Type, op.Key)
			}
		}
	}
	if got := s.Properties()["insertanywhere"]; got != "true" {
		t.Errorf("Properties()[insertanywhere] = %q, want true", got)
	}
	if _, ok := specWith(t, Properties{"partitionedkeys": "true"}).Properties()["insertanywhere"]; ok {
		t.Error("insertanywhere=false is recorded in Properties; results from before it existed would change their hash")
	}
	if _, err := FromProperties("x.properties", Properties{"insertanywhere": "true"}, nil); err == nil || !strings.Contains(err.Error(), "partitionedkeys=true") {
		t.Errorf("insertanywhere without partitions: error %v, want one naming partitionedkeys", err)
	}
}

func TestOpTypeNames(t *testing.T) {
	got := []string{Read.String(), Update.String(), Insert.String(), Scan.String(), ReadModifyWrite.String(), OpType(9).String()}
	want := []string{"READ", "UPDATE", "INSERT", "SCAN", "READ_MODIFY_WRITE", "OpType(9)"}
	if !slices.Equal(got, want) {
		t.Errorf("names %v, want %v", got, want)
	}
}

func TestValuesChangeBetweenWrites(t *testing.T) {
	s := builtinSmall(t, "dmtree-update-only", 1000, nil)
	st := mustStream(t, s, solo)
	first := bytes.Clone(st.Next().Value)
	if bytes.Equal(first, st.Next().Value) {
		t.Error("two updates wrote the same value")
	}
}

func BenchmarkStreamNext(b *testing.B) {
	for _, c := range []struct {
		name  string
		props Properties
		nodes int
	}{
		{"zipfian", nil, 1},
		{"zipfian-partitioned-4", Properties{"partitionedkeys": "true"}, 4},
		{"uniform", Properties{"requestdistribution": "uniform"}, 1},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := builtinSmall(b, "dex-read-intensive", 1_000_000, c.props)
			st := mustStream(b, s, Client{Node: 0, Nodes: c.nodes, Index: 0, Total: c.nodes})
			for b.Loop() {
				st.Next()
			}
		})
	}
}

// BenchmarkStreamNextCluster draws operations round robin from the streams
// of DMTree's evaluation's 1,728 clients: as in a whole run, a stream has
// left the core's private caches by the time its client draws again.
func BenchmarkStreamNextCluster(b *testing.B) {
	for _, dist := range []string{"uniform", "zipfian"} {
		b.Run(dist, func(b *testing.B) {
			s, err := Builtin("dmtree-search-only", Properties{"recordcount": "100000", "requestdistribution": dist})
			if err != nil {
				b.Fatal(err)
			}
			clients, err := Cluster(6, 288)
			if err != nil {
				b.Fatal(err)
			}
			streams := make([]*Stream, len(clients))
			for i, c := range clients {
				if streams[i], err = s.Stream(c); err != nil {
					b.Fatal(err)
				}
			}
			i := 0
			for b.Loop() {
				streams[i].Next()
				if i++; i == len(streams) {
					i = 0
				}
			}
		})
	}
}

func BenchmarkRecords(b *testing.B) {
	s := builtinSmall(b, "dex-read-only", 1_000_000, nil)
	for b.Loop() {
		recs, err := s.Records()
		if err != nil {
			b.Fatal(err)
		}
		for range recs {
		}
	}
}

// After SetPartition a client draws only keys of its new range, a range a
// repartitioning cut at Split; an empty range or an unpartitioned stream
// is refused.
func TestSetPartitionMovesAClient(t *testing.T) {
	s := builtinSmall(t, "dex-write-intensive", 20_000, Properties{"partitionedkeys": "true"})
	ranges, err := s.Partitions(3)
	if err != nil {
		t.Fatal(err)
	}
	split := ranges[1].Split(0.5)
	if bytes.Compare(split, ranges[1].Start) <= 0 || bytes.Compare(split, ranges[1].End) >= 0 {
		t.Fatalf("Split(0.5) of [%x, %x) = %x, outside the range", ranges[1].Start, ranges[1].End, split)
	}
	upper := KeyRange{Start: split, End: ranges[1].End}
	st := mustStream(t, s, Client{Node: 1, Nodes: 3, Index: 5, Total: 12})
	if err := st.SetPartition(upper); err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		if op := st.Next(); !upper.Contains(op.Key) {
			t.Fatalf("operation %d: key %x outside [%x, %x)", i, op.Key, upper.Start, upper.End)
		}
	}
	if last := (KeyRange{Start: ranges[2].Split(0.5)}); last.End != nil || !last.Contains(bytes.Repeat([]byte{0xff}, 8)) {
		t.Errorf("the upper half of the last range does not reach the largest key")
	}
	empty := KeyRange{Start: split, End: split}
	if err := st.SetPartition(empty); err == nil || !strings.Contains(err.Error(), "holds none") {
		t.Errorf("SetPartition of an empty range: %v, want an error saying it holds no records", err)
	}
	plain := mustStream(t, builtinSmall(t, "dex-write-intensive", 1000, nil), Client{Node: 0, Nodes: 1, Index: 0, Total: 1})
	if err := plain.SetPartition(upper); err == nil || !strings.Contains(err.Error(), "partitionedkeys") {
		t.Errorf("SetPartition of an unpartitioned stream: %v, want an error naming partitionedkeys", err)
	}
}

// TestPartitionFoldSpreadsEachNodesLoad checks partitionfold: every key
// stays in the node's range, and under Zipfian no node sends as large a
// share of its requests to one key as the node holding the global top
// keys does when out-of-range draws are drawn again.
func TestPartitionFoldSpreadsEachNodesLoad(t *testing.T) {
	const nodes = 6
	clients, err := Cluster(nodes, 1)
	if err != nil {
		t.Fatal(err)
	}
	hottest := func(props Properties) float64 {
		s := builtinSmall(t, "dmtree-search-only", 20_000, props)
		ranges, err := s.Partitions(nodes)
		if err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for _, c := range clients {
			st := mustStream(t, s, c)
			seen := map[string]int{}
			const n = 5000
			top := 0
			for range n {
				op := st.Next()
				if !ranges[c.Node].Contains(op.Key) {
					t.Fatalf("%v: node %d drew %x, outside [%x, %x)", props, c.Node, op.Key, ranges[c.Node].Start, ranges[c.Node].End)
				}
				seen[string(op.Key)]++
				top = max(top, seen[string(op.Key)])
			}
			worst = max(worst, float64(top)/n)
		}
		return worst
	}
	for _, order := range []string{"hashed", "ordered", "permuted"} {
		redraw := hottest(Properties{"partitionedkeys": "true", "insertorder": order})
		fold := hottest(Properties{"partitionedkeys": "true", "partitionfold": "true", "insertorder": order})
		if fold >= redraw {
			t.Errorf("%s keys: hottest key's share of a node's requests: %.3f folded, %.3f drawn again; want folding to spread it", order, fold, redraw)
		}
		t.Logf("%s keys: hottest key's share of a node's requests: %.3f folded, %.3f drawn again", order, fold, redraw)
	}
}

func TestPartitionFoldNeedsPartitionedKeys(t *testing.T) {
	for _, c := range []struct {
		props Properties
		want  string
	}{
		{Properties{"partitionfold": "true"}, `partitionfold="true": want false unless partitionedkeys=true`},
	} {
		all := Properties{"recordcount": "100", "readproportion": "1", "updateproportion": "0", "fieldcount": "1", "fieldlength": "8"}
		for k, v := range c.props {
			all[k] = v
		}
		_, err := FromProperties("test.properties", all, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one containing %q", c.props, err, c.want)
		}
	}
}

// TestKeyedUpdatesRepeatAValue checks keyedupdates: every update of a key
// writes one value, which is not the key's loaded value.
func TestKeyedUpdatesRepeatAValue(t *testing.T) {
	for _, order := range []string{"hashed", "ordered"} {
		s := specWith(t, Properties{"recordcount": "50", "readproportion": "0", "updateproportion": "1", "keyedupdates": "true", "insertorder": order})
		records, err := s.Records()
		if err != nil {
			t.Fatal(err)
		}
		loaded := map[string]string{}
		for k, v := range records {
			loaded[string(k)] = string(v)
		}
		wrote := map[string]string{}
		st := mustStream(t, s, Client{Node: 0, Nodes: 1, Index: 0, Total: 1})
		for range 500 {
			op := st.Next()
			k, v := string(op.Key), string(op.Value)
			if prev, ok := wrote[k]; ok && prev != v {
				t.Fatalf("%s keys: key %x updated to two values", order, op.Key)
			}
			if v == loaded[k] {
				t.Fatalf("%s keys: key %x updated to its loaded value", order, op.Key)
			}
			wrote[k] = v
		}
		if vals := map[string]bool{}; len(wrote) > 1 {
			for _, v := range wrote {
				vals[v] = true
			}
			if len(vals) != len(wrote) {
				t.Errorf("%s keys: %d keys updated to %d distinct values, want one each", order, len(wrote), len(vals))
			}
		}
	}
}

// With insertsplit=chunked each client inserts one contiguous run of
// ordered keys, the runs of the clients side by side, and a client that
// outruns its chunk takes numbers no chunk holds.
func TestChunkedInserts(t *testing.T) {
	s := builtinSmall(t, "dolphin-load", 0, Properties{"operationcount": "90", "warmupoperationcount": "9", "insertsplit": "chunked"})
	if got := s.Properties()[PropInsertSplit]; got != "chunked" {
		t.Fatalf("Properties()[insertsplit] = %q, want chunked", got)
	}
	clients, err := Cluster(3, 3)
	if err != nil {
		t.Fatal(err)
	}
	const chunk = 1 + 10 // ceil(9/9) + ceil(90/9): a client's most operations
	seen := map[uint64]int{}
	for _, cl := range clients {
		st := mustStream(t, s, cl)
		for k := range chunk + 5 {
			op := st.Next()
			if op.Type != Insert {
				t.Fatalf("client %d op %d is a %v", cl.Index, k, op.Type)
			}
			n := binary.BigEndian.Uint64(op.Key)
			if by, dup := seen[n]; dup {
				t.Fatalf("clients %d and %d both insert key %d", by, cl.Index, n)
			}
			seen[n] = cl.Index
			if want := uint64(cl.Index*chunk + k + 1); k < chunk && n != want {
				t.Fatalf("client %d insert %d has key %d, want %d (its chunk, in order)", cl.Index, k, n, want)
			}
			if k >= chunk && n <= uint64(len(clients)*chunk) {
				t.Fatalf("client %d insert %d past its chunk has key %d, inside the chunks", cl.Index, k, n)
			}
		}
	}
	if d := specWith(t, nil).Properties(); d[PropInsertSplit] != "" {
		t.Error("the default insertsplit is recorded in Properties; results from before it existed would change their hash")
	}
	for _, c := range []struct {
		props Properties
		want  string
	}{
		{Properties{"insertsplit": "striped"}, "one of interleaved, chunked, uniform"},
		{Properties{"insertsplit": "chunked", "insertorder": "permuted"}, "interleaved with insertorder=permuted"},
		{Properties{"insertsplit": "chunked", "partitionedkeys": "true"}, "unless insertanywhere=true"},
	} {
		if _, err := FromProperties("x.properties", c.props, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one saying %q", c.props, err, c.want)
		}
	}
}

// insertsplit=uniform draws every insert's record over twice the loaded
// records, as Dolphin's benchmarks draw insert keys over a key space whose
// lower half they loaded: about half the inserts replace loaded records,
// the rest spread over the upper half. The draws are a function of the
// seed, the client and the position, so a stream repeats itself and
// knows which records it made.
func TestUniformInserts(t *testing.T) {
	const records = 1000
	s := builtinSmall(t, "dolphin-range-write", records, Properties{"insertproportion": "1", "scanproportion": "0", "insertsplit": "uniform"})
	if got := s.Properties()[PropInsertSplit]; got != "uniform" {
		t.Fatalf("Properties()[insertsplit] = %q, want uniform", got)
	}
	clients, err := Cluster(2, 2)
	if err != nil {
		t.Fatal(err)
	}
	const n = 4000
	loaded, upper := 0, map[uint64]bool{}
	var first [][]uint64
	for _, cl := range clients {
		a, b := mustStream(t, s, cl), mustStream(t, s, cl)
		var keys []uint64
		for i := range n {
			op, again := a.Next(), b.Next()
			if op.Type != Insert {
				t.Fatalf("client %d op %d is a %v", cl.Index, i, op.Type)
			}
			k := binary.BigEndian.Uint64(op.Key)
			if k2 := binary.BigEndian.Uint64(again.Key); k2 != k {
				t.Fatalf("client %d insert %d: key %d, then %d from a second stream", cl.Index, i, k, k2)
			}
			if k < 1 || k > 2*records {
				t.Fatalf("client %d insert %d has key %d, want 1-%d (record i is key i+1)", cl.Index, i, k, 2*records)
			}
			if k <= records {
				loaded++
			} else {
				upper[k] = true
			}
			keys = append(keys, k)
		}
		first = append(first, keys[:8])
	}
	if f := float64(loaded) / float64(n*len(clients)); f < 0.45 || f > 0.55 {
		t.Errorf("%.2f of the inserts hit loaded records, want about half", f)
	}
	if len(upper) < records*9/10 {
		t.Errorf("new inserts took %d distinct keys of the upper %d, want them spread over nearly all", len(upper), records)
	}
	if slices.Equal(first[0], first[1]) {
		t.Errorf("clients 0 and 1 draw the same inserts %v", first[0])
	}
	for _, c := range []struct {
		props Properties
		want  string
	}{
		{Properties{"insertsplit": "uniform", "insertorder": "permuted"}, "interleaved or chunked with insertorder=permuted"},
		{Properties{"insertsplit": "uniform", "partitionedkeys": "true"}, "interleaved or chunked with partitionedkeys=true"},
		{Properties{"insertsplit": "uniform", "recordcount": "0"}, "interleaved or chunked with recordcount=0"},
	} {
		if _, err := FromProperties("x.properties", c.props, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one saying %q", c.props, err, c.want)
		}
	}
}
