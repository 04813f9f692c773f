package workloads

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/dmbench/dmbench/workloads/internal/twitterfixture"
)

// traceSpec builds a trace-replaying Spec over the file at path.
func traceSpec(t *testing.T, path string, load, warmup, ops int64, props Properties) *Spec {
	t.Helper()
	all := Properties{"tracefile": path, "recordcount": itoa(load), "warmupoperationcount": itoa(warmup),
		"operationcount": itoa(ops), "fieldcount": "1", "fieldlength": "8", "insertorder": "ordered"}
	for k, v := range props {
		all[k] = v
	}
	s, err := FromProperties("trace.properties", all, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// ordered key of number n, 8 bytes.
func numKey(n uint64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], n)
	return string(b[:])
}

func TestTraceMapsOperationsInTraceOrder(t *testing.T) {
	// Keys a, b, c, "d,1,1" (a key with commas), e get ordered numbers 1-5 in
	// the order the trace first names them.
	lines := []string{
		"0,a,1,8,1,get,0",      // load: a present
		"0,b,1,8,2,set,60",     // load: b present
		"0,c,1,8,1,set,60",     // load: c present ...
		"0,c,1,0,1,delete,0",   // ... then deleted
		"1,a,1,8,1,set,60",     // a is loaded: update
		"1,c,1,8,2,add,60",     // c was deleted: insert
		"1,c,1,8,2,incr,0",     // now update
		"1,d,1,1,3,5,3,gets,0", // "d,1,1" is the key: a read of an absent key
		"2,b,1,0,1,delete,0",   // delete
		"2,b,1,8,1,cas,60",     // b deleted: insert
		"2,a,1,8,1,append,60",
		"2,a,1,8,1,prepend,60",
		"2,e,1,8,1,decr,0",    // new key: insert
		"2,e,1,8,1,replace,0", // update
	}
	path := writeFile(t, "t.csv", strings.Join(lines, "\n")+"\n")
	s := traceSpec(t, path, 4, 2, 8, nil)
	recs, err := s.Records()
	if err != nil {
		t.Fatal(err)
	}
	var loaded []string
	for k := range recs {
		loaded = append(loaded, string(k))
	}
	if want := []string{numKey(1), numKey(2)}; !slices.Equal(loaded, want) {
		t.Errorf("bulk load %x, want keys 1 and 2 (a and b; c was deleted)", loaded)
	}
	if n, err := s.LoadedRecords(); n != 2 || err != nil {
		t.Errorf("LoadedRecords() = %d, %v; want the 2 keys of the bulk load", n, err)
	}
	st, err := s.Stream(Client{Node: 0, Nodes: 1, Index: 0, Total: 1})
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		op  OpType
		key uint64
	}
	want := []got{{Update, 1}, {Insert, 3}, {Update, 3}, {Read, 4}, {Delete, 2}, {Insert, 2}, {Update, 1}, {Update, 1}, {Insert, 5}, {Update, 5}}
	for i, w := range want {
		op := st.Next()
		g := got{op.Type, binary.BigEndian.Uint64(op.Key)}
		if g != w {
			t.Errorf("op %d = %v of key %d, want %v of key %d", i, g.op, g.key, w.op, w.key)
		}
		if (op.Type == Insert || op.Type == Update) != (len(op.Value) == 8) {
			t.Errorf("op %d (%v) carries a %d-byte value", i, op.Type, len(op.Value))
		}
	}
	// Past its lines a client replays them as reads.
	if op := st.Next(); op.Type != Read || binary.BigEndian.Uint64(op.Key) != 1 {
		t.Errorf("op past the end = %v of %x, want a read of key 1", op.Type, op.Key)
	}
}

func TestTraceClientsSplitLinesRoundRobin(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mixed.0")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := twitterfixture.Write(f, twitterfixture.Profiles["mixed"], 3000, 7); err != nil {
		t.Fatal(err)
	}
	f.Close()
	s := traceSpec(t, path, 1000, 301, 1499, nil)
	whole, err := s.loadTrace()
	if err != nil {
		t.Fatal(err)
	}
	clients, _ := Cluster(2, 3)
	for _, c := range clients {
		st, err := s.Stream(c)
		if err != nil {
			t.Fatal(err)
		}
		for phase, lines := range [][]traceOp{whole.ops[:301], whole.ops[301:]} {
			n := c.Share(int64(len(lines)))
			for j := range n {
				op := st.Next()
				w := lines[int64(c.Index)+j*int64(c.Total)]
				if op.Type != w.op || binary.BigEndian.Uint64(op.Key) != w.number {
					t.Fatalf("client %d phase %d op %d = %v %x, want line %d: %v %d",
						c.Index, phase, j, op.Type, op.Key, int64(c.Index)+j*int64(c.Total), w.op, w.number)
				}
			}
		}
	}
	// Every kind of request shows up in the mixed profile.
	kinds := map[OpType]int{}
	for _, o := range whole.ops {
		kinds[o.op]++
	}
	for _, k := range []OpType{Read, Update, Insert, Delete} {
		if kinds[k] == 0 {
			t.Errorf("no %v among %d replayed requests: %v", k, len(whole.ops), kinds)
		}
	}
}

func TestTraceReadsZstdAsPlain(t *testing.T) {
	var plain bytes.Buffer
	if err := twitterfixture.Write(&plain, twitterfixture.Profiles["cluster9"], 2000, 3); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	plainPath := filepath.Join(dir, "cluster9.0")
	zstPath := filepath.Join(dir, "cluster9.0.zst")
	if err := os.WriteFile(plainPath, plain.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	enc, _ := zstd.NewWriter(nil)
	if err := os.WriteFile(zstPath, enc.EncodeAll(plain.Bytes(), nil), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, order := range []string{"ordered", "hashed"} {
		a, err := traceSpec(t, plainPath, 500, 500, 1000, Properties{"insertorder": order}).loadTrace()
		if err != nil {
			t.Fatal(err)
		}
		b, err := traceSpec(t, zstPath, 500, 500, 1000, Properties{"insertorder": order}).loadTrace()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.loaded, b.loaded) || !slices.Equal(a.ops, b.ops) || len(a.ops) != 1500 {
			t.Errorf("%s: the zstd file replays differently from the plain one (%d and %d ops)", order, len(a.ops), len(b.ops))
		}
	}
}

func TestTraceKeyMappings(t *testing.T) {
	ordered := newTraceKeys(Ordered)
	hashed := newTraceKeys(Hashed)
	for i, k := range []string{"x", "y", "x", "z"} {
		want := map[int]uint64{0: 1, 1: 2, 2: 1, 3: 3}[i]
		if got := ordered.number([]byte(k)); got != want {
			t.Errorf("ordered number of %q = %d, want %d (first-appearance order)", k, got, want)
		}
	}
	if hashed.number([]byte("x")) == hashed.number([]byte("y")) || hashed.number([]byte("x")) != hashed.number([]byte("x")) {
		t.Error("hashed numbers of distinct keys agree, or of one key differ")
	}
	// FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c.
	if got := hashed.number([]byte("a")); got != 0xaf63dc4c8601ec8c {
		t.Errorf("hashed number of \"a\" = %#x, want FNV-1a 0xaf63dc4c8601ec8c", got)
	}
}

func TestTraceErrors(t *testing.T) {
	short := writeFile(t, "short.csv", "0,a,1,8,1,get,0\n0,b,1,8,1,set,0\n")
	bad := writeFile(t, "bad.csv", "0,a,1,8,1,get,0\n0,b,1,8,1,touch,0\n")
	torn := writeFile(t, "torn.csv", "0,a,1,8,1,get,0\n0,b,get\n")
	for _, c := range []struct {
		path string
		want []string
	}{
		{short, []string{"has 2 lines", "replays 3", "recordcount 1", "warmupoperationcount 1", "operationcount 1"}},
		{bad, []string{"line 2", `operation "touch"`, "get, gets, set"}},
		{torn, []string{"line 2", "timestamp,key,key size,value size,client id,operation,TTL"}},
	} {
		_, err := traceSpec(t, c.path, 1, 1, 1, nil).Records()
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %v, want it to say %q", filepath.Base(c.path), err, w)
			}
		}
	}
	if _, err := FromProperties("x", Properties{"tracefile": short, "partitionedkeys": "true"}, nil); err == nil ||
		!strings.Contains(err.Error(), "split over clients by line") {
		t.Errorf("tracefile with partitionedkeys: error %v", err)
	}
	missing := traceSpec(t, filepath.Join(t.TempDir(), "cluster8.0.zst"), 1, 1, 1, nil)
	msg := missing.TraceMissing()
	for _, w := range []string{"cluster8.0.zst not found", "twemcacheWorkload/open_source/cluster8.0.zst", "--trace-dir", "scripts/gen-twitter-fixture"} {
		if !strings.Contains(msg, w) {
			t.Errorf("TraceMissing() = %q, want it to say %q", msg, w)
		}
	}
	if m := traceSpec(t, short, 1, 0, 1, nil).TraceMissing(); m != "" {
		t.Errorf("TraceMissing() of an existing file = %q", m)
	}
}

func TestFixtureIsDeterministic(t *testing.T) {
	var a, b, c bytes.Buffer
	p := twitterfixture.Profiles["cluster8"]
	for _, w := range []struct {
		buf  *bytes.Buffer
		seed int64
	}{{&a, 1}, {&b, 1}, {&c, 2}} {
		if err := twitterfixture.Write(w.buf, p, 500, w.seed); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) || bytes.Equal(a.Bytes(), c.Bytes()) {
		t.Error("the fixture is not a function of its seed")
	}
	for i, line := range strings.Split(strings.TrimSuffix(a.String(), "\n"), "\n") {
		if _, _, err := parseTraceLine([]byte(line)); err != nil {
			t.Fatalf("fixture line %d: %v", i+1, err)
		}
	}
}
