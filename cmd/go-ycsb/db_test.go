package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"testing"

	"github.com/magiconair/properties"

	"github.com/dmbench/dmbench/indexes"
)

func testProperties(t *testing.T, kv ...string) *properties.Properties {
	t.Helper()
	p := properties.NewProperties()
	for i := 0; i+1 < len(kv); i += 2 {
		if _, _, err := p.Set(kv[i], kv[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// Many go-ycsb threads on two compute nodes use the DB at once: each
// inserts, reads, updates, scans and deletes its own keys while the others
// do the same next to them. Run it with -race: the threads share the index
// and the fabric.
func TestConcurrentDB(t *testing.T) {
	const threads, keys = 8, 150
	var report bytes.Buffer
	d, err := openDB("ideal", testProperties(t, "threadcount", "8", "dm.compute-nodes", "2", "dm.threads", "2",
		"dm.mode", "strict", "fieldcount", "2", "fieldlength", "16"), &report)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for th := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := d.InitThread(context.Background(), th, threads)
			defer d.CleanupThread(ctx)
			key := func(i int) string { return fmt.Sprintf("user%02d-%05d", th, i) }
			for i := range keys {
				if err := d.Insert(ctx, "usertable", key(i), map[string][]byte{"field0": []byte(key(i)), "field1": []byte("v1")}); err != nil {
					t.Error(err)
					return
				}
				if err := d.Update(ctx, "usertable", key(i), map[string][]byte{"field0": []byte(key(i)), "field1": []byte("v2")}); err != nil {
					t.Error(err)
					return
				}
				row, err := d.Read(ctx, "usertable", key(i), nil)
				if err != nil || string(row["field0"]) != key(i) || string(row["field1"]) != "v2" {
					t.Errorf("read %s: %q, %v", key(i), row, err)
					return
				}
			}
			rows, err := d.Scan(ctx, "usertable", key(0), keys, []string{"field0"})
			if err != nil || len(rows) != keys {
				t.Errorf("scan of thread %d's keys: %d rows, %v", th, len(rows), err)
				return
			}
			for i, row := range rows {
				if string(row["field0"]) != key(i) {
					t.Errorf("scan row %d is %q, want %s", i, row["field0"], key(i))
					return
				}
			}
			for i := 0; i < keys; i += 2 {
				if err := d.Delete(ctx, "usertable", key(i)); err != nil {
					t.Error(err)
					return
				}
			}
			if _, err := d.Read(ctx, "usertable", key(0), nil); !errors.Is(err, indexes.ErrNotFound) {
				t.Errorf("read of a deleted key: %v, want key not found", err)
			}
			if err := d.Update(ctx, "usertable", key(0), map[string][]byte{"field0": []byte("x")}); !errors.Is(err, indexes.ErrNotFound) {
				t.Errorf("update of a deleted key: %v, want key not found", err)
			}
		}()
	}
	wg.Wait()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	// The Expected bound: 2 verbs per insert (and a rare chunk RPC) and
	// per update, 1 per read, none for an absent key (so 300/151 and
	// 150/151 per operation), 2 per delete.
	for _, want := range []string{
		fmt.Sprintf(`INSERT +%d +2\.\d\d `, threads*keys),
		fmt.Sprintf(`UPDATE +%d +1\.99 `, threads*(keys+1)),
		fmt.Sprintf(`READ +%d +0\.99 `, threads*(keys+1)),
		fmt.Sprintf(`SCAN +%d `, threads),
		fmt.Sprintf(`DELETE +%d +2\.00 `, threads*keys/2),
		`2 compute nodes x 2 threads`,
		`(?m)^2 +compute +\d+ `,
	} {
		if !regexp.MustCompile(want).MatchString(report.String()) {
			t.Errorf("report lacks %s:\n%s", want, report.String())
		}
	}
}

// Update and read of an absent key fail as go-ycsb DBs fail them; a
// partial update replaces the whole value (it is one index update).
func TestUpdateSemantics(t *testing.T) {
	d, err := openDB("ideal", testProperties(t, "fieldcount", "2", "fieldlength", "4"), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := d.InitThread(context.Background(), 0, 1)
	if err := d.Update(ctx, "t", "k", map[string][]byte{"field0": []byte("a")}); !errors.Is(err, indexes.ErrNotFound) {
		t.Errorf("update of an absent key: %v", err)
	}
	if err := d.Insert(ctx, "t", "k", map[string][]byte{"field0": []byte("a"), "field1": []byte("b")}); err != nil {
		t.Fatal(err)
	}
	if err := d.Update(ctx, "t", "k", map[string][]byte{"field1": []byte("c")}); err != nil {
		t.Fatal(err)
	}
	row, err := d.Read(ctx, "t", "k", nil)
	if err != nil || len(row) != 1 || string(row["field1"]) != "c" {
		t.Errorf("after a partial update: %q, %v; want only field1=c", row, err)
	}
	d.CleanupThread(ctx)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}
