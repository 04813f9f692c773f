package bench

import (
	"encoding/json"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	_ "github.com/dmbench/dmbench/indexes/all"
	"github.com/dmbench/dmbench/workloads"
)

// A per-node warm-up that copies one compute node's caches to the others
// (indexes.CacheCopier) gives the run every compute node searching for
// itself would: the same result, event hash, cache counters and all, for
// every index that copies, with caches that evict and caches that do not,
// for searches, writes under skew and scans.
func TestCacheCopyIsExact(t *testing.T) {
	copiers := map[string]bool{}
	for _, c := range copyRuns(t) {
		if !copiers[c.Index] {
			copiers[c.Index] = true
			t.Logf("%s copies its caches", c.Index)
		}
		copied := resultJSON(t, c)
		c.searchEveryNode = true
		if searched := resultJSON(t, c); copied != searched {
			t.Errorf("%s, %s, %d B cache: the run after copying caches differs from the run after every node searched:\ncopied   %s\nsearched %s", c.Index, c.Workload.Name, c.CacheBytes, copied, searched)
		}
	}
	if len(copiers) == 0 {
		t.Error("no registered index copies its caches")
	}
}

// copyRuns are the runs the copy tests compare, on 3 compute nodes of 2
// threads: for every registered index that copies its caches, a search
// with a cache that evicts, Zipfian YCSB A and YCSB E.
func copyRuns(t *testing.T) []Config {
	t.Helper()
	runs := []struct {
		workload string
		props    workloads.Properties
		cache    uint64
	}{
		{"dmtree-search-only", nil, 48 << 10},
		{"dmtree-ycsb-a", workloads.Properties{"requestdistribution": "zipfian"}, 16 << 20},
		{"dmtree-ycsb-e", nil, 256 << 10},
	}
	var cs []Config
	for _, name := range indexes.Names() {
		for _, run := range runs {
			props := workloads.Properties{"recordcount": "4000", "operationcount": "2000", "warmupoperationcount": "200"}
			for k, v := range run.props {
				props[k] = v
			}
			c := smallConfig(t, run.workload, props)
			c.Index, c.ComputeNodes, c.Threads, c.CacheBytes = name, 3, 2, run.cache
			if !copies(t, c) {
				break
			}
			cs = append(cs, c)
		}
	}
	return cs
}

// copies reports whether c's index copies caches.
func copies(t *testing.T, c Config) bool {
	t.Helper()
	f, idx, err := Build(&c)
	if err != nil {
		t.Fatalf("%s: %v", c.Index, err)
	}
	defer f.Close()
	_, ok := idx.(indexes.CacheCopier)
	return ok
}

// resultJSON runs c and returns its result without the wall times.
func resultJSON(t *testing.T, c Config) string {
	t.Helper()
	res, err := Run(c)
	if err != nil {
		t.Fatalf("%s, %s: %v", c.Index, c.Workload.Name, err)
	}
	res.WallS, res.LoadWallS, res.WarmupWallS = 0, 0, 0
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A run that borrows another run's warm-up through a Warm (the runs of a
// sweep over client threads) gives the result it gives on its own, for
// every index that copies: the template was warmed with another number
// of threads, by a copy from the run that kept it.
func TestWarmCopyIsExact(t *testing.T) {
	for _, first := range copyRuns(t) {
		name, workload := first.Index, first.Workload.Name
		second := first
		second.Threads = 3
		alone := resultJSON(t, second)
		w := NewWarm(1)
		w.Expect(&first)
		w.Expect(&second)
		if _, err := RunWarm(first, w); err != nil {
			t.Fatalf("%s, %s: %v", name, workload, err)
		}
		res, err := RunWarm(second, w)
		if err != nil {
			t.Fatalf("%s, %s: %v", name, workload, err)
		}
		if w.lent == 0 {
			t.Errorf("%s, %s: the second run copied nothing from the first's warm-up", name, workload)
		}
		if len(w.kept) != 0 {
			t.Errorf("%s, %s: a template is kept after the last run of its key", name, workload)
		}
		res.WallS, res.LoadWallS, res.WarmupWallS = 0, 0, 0
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != alone {
			t.Errorf("%s, %s, %d B cache: the run after borrowing a warm-up differs from the run alone:\nborrowed %s\nalone    %s", name, workload, first.CacheBytes, b, alone)
		}
	}
}

// Runs warm up alike, and share a warm-up key, when they differ only in
// what their operations depend on; a difference in what the load or the
// caches depend on gives another key, and runs whose warm-up is never
// lent have none.
func TestWarmKey(t *testing.T) {
	base := smallConfig(t, "dmtree-search-only", workloads.Properties{"recordcount": "4000"})
	base.Index = "dmtree"
	key := func(c Config) string {
		k, ok := c.warmKey()
		if !ok {
			return ""
		}
		return k
	}
	if key(base) == "" {
		t.Fatal("a per-node warm-up on sim has no warm-up key")
	}
	with := func(workload string, props workloads.Properties, change func(*Config)) Config {
		p := workloads.Properties{"recordcount": "4000"}
		for k, v := range props {
			p[k] = v
		}
		c := smallConfig(t, workload, p)
		c.Index = "dmtree"
		if change != nil {
			change(&c)
		}
		return c
	}
	same := map[string]Config{
		"threads":    with("dmtree-search-only", nil, func(c *Config) { c.Threads, c.Coroutines = 7, 3 }),
		"operations": with("dmtree-search-only", workloads.Properties{"operationcount": "99", "warmupoperationcount": "5"}, nil),
		"mix":        with("dmtree-ycsb-e", workloads.Properties{"maxscanlength": "1000", "requestdistribution": "uniform", "insertorder": "hashed"}, nil),
	}
	for name, c := range same {
		if key(c) != key(base) {
			t.Errorf("a run that differs in its %s warms up alike, but its key differs", name)
		}
	}
	other := map[string]Config{
		"records":    with("dmtree-search-only", workloads.Properties{"recordcount": "5000"}, nil),
		"value size": with("dmtree-search-only", workloads.Properties{"fieldlength": "64"}, nil),
		"cache":      with("dmtree-search-only", nil, func(c *Config) { c.CacheBytes++ }),
		"index":      with("dmtree-search-only", nil, func(c *Config) { c.Params = map[string]string{"variant": "cache"} }),
		"nodes":      with("dmtree-search-only", nil, func(c *Config) { c.ComputeNodes++ }),
		"seed":       with("dmtree-search-only", nil, func(c *Config) { c.Seed++ }),
		"key order":  with("dmtree-search-only", workloads.Properties{"insertorder": "ordered"}, nil),
	}
	for name, c := range other {
		if k := key(c); k == "" || k == key(base) {
			t.Errorf("a run with another %s shares the warm-up key", name)
		}
	}
	never := map[string]Config{
		"read-all in virtual time": with("dmtree-search-only", workloads.Properties{"warmupreadall": "true"}, nil),
		"partitioned keys":         with("dmtree-search-only", workloads.Properties{"partitionedkeys": "true"}, nil),
		"local fabric":             with("dmtree-search-only", nil, func(c *Config) { c.Fabric = "local" }),
	}
	for name, c := range never {
		if key(c) != "" {
			t.Errorf("a run with %s has a warm-up key", name)
		}
	}
}
