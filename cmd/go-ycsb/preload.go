package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/magiconair/properties"
	"github.com/pingcap/go-ycsb/pkg/prop"
	"github.com/pingcap/go-ycsb/pkg/util"
	"github.com/pingcap/go-ycsb/pkg/ycsb"
)

// preload loads the records of go-ycsb's load phase before a run or a
// shell, unmeasured, as dm.preload says: the local fabric and its index
// live only as long as the process, so the records a separate `go-ycsb
// load` inserted are gone. Counters are reset afterwards, so the report
// covers what follows.
func preload(ctx context.Context, d *db, wl ycsb.Workload, p *properties.Properties, threads int) error {
	if d.attached {
		fmt.Printf("Using the %s index the memory nodes %s hold, published by an earlier go-ycsb process: no preload\n",
			d.index, strings.Join(d.opts.memNodes, ","))
		return nil
	}
	count, _, err := operations(p, false)
	if err != nil || count == 0 || d.opts.preload == "none" {
		return err
	}
	start := time.Now()
	how := "go-ycsb's load phase"
	if d.opts.preload == "bulk" {
		how = "bulk load"
		err = bulkLoad(d, p, count)
	} else {
		err = insertAll(ctx, d, wl, count, threads)
	}
	if err != nil {
		return fmt.Errorf("preloading %d records (dm.preload=%s): %w", count, d.opts.preload, err)
	}
	if err := d.publish(); err != nil {
		return err
	}
	d.resetStats()
	fmt.Printf("Preloaded %d records in %s by %s (dm.preload=%s), not measured\n",
		count, time.Since(start).Round(time.Millisecond), how, d.opts.preload)
	return nil
}

// insertAll runs go-ycsb's load phase: the workload's own DoInsert on
// threads threads, so the keys and values are exactly those `go-ycsb load`
// makes. The workload's insert counter then leaves the run's inserts to
// new keys.
func insertAll(ctx context.Context, d *db, wl ycsb.Workload, count int64, threads int) error {
	errs := make([]error, threads)
	var wg sync.WaitGroup
	for i := range threads {
		share := count / int64(threads)
		if int64(i) < count%int64(threads) {
			share++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			tctx := d.InitThread(wl.InitThread(ctx, i, threads), i, threads)
			defer wl.CleanupThread(tctx)
			defer d.CleanupThread(tctx)
			for range share {
				if err := wl.DoInsert(tctx, d); err != nil {
					errs[i] = err
					return
				}
				if err := ctx.Err(); err != nil {
					errs[i] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// bulkLoad loads the records of go-ycsb's load phase through the index's
// bulk load, into the new index before any thread starts, as dmbench's
// runner loads its records: sorted, written through a setup endpoint, no
// verbs counted. The keys are those go-ycsb's core
// workload names (keyprefix, then the record number from insertstart on,
// FNV-1a-hashed unless insertorder=ordered, zero-padded to zeropadding
// digits); every field holds fieldlength random letters, as go-ycsb's
// constant field lengths make them, drawn from dm.seed.
func bulkLoad(d *db, p *properties.Properties, count int64) error {
	first, err := intProperty(p, prop.InsertStart, prop.InsertStartDefault, 0, 1<<48)
	if err != nil {
		return err
	}
	prefix := p.GetString(prop.KeyPrefix, prop.KeyPrefixDefault)
	pad := p.GetInt64(prop.ZeroPadding, prop.ZeroPaddingDefault)
	hashed := p.GetString(prop.InsertOrder, prop.InsertOrderDefault) == "hashed"
	size := d.opts.keySize
	arena := make([]byte, count*int64(size))
	keys := make([][]byte, count)
	for i := range keys {
		n := first + int64(i)
		if hashed {
			n = util.Hash64(n)
		}
		keys[i] = arena[i*size : (i+1)*size]
		if err := d.codec.key(keys[i], fmt.Sprintf("%s%0*d", prefix, pad, n)); err != nil {
			return err
		}
	}
	slices.SortFunc(keys, bytes.Compare)
	// Two record numbers can hash to one key (the hash is folded to be
	// non-negative); go-ycsb's second insert would overwrite the first.
	keys = slices.CompactFunc(keys, bytes.Equal)
	r := rand.New(rand.NewSource(int64(d.opts.seed)))
	val := make([]byte, d.opts.valueSize)
	filled := val[:min(len(val), d.opts.fieldCount*d.opts.fieldLength)]
	records := func(yield func([]byte, []byte) bool) {
		for _, k := range keys {
			util.RandBytes(r, filled)
			if !yield(k, val) {
				return
			}
		}
	}
	if err := d.idx.BulkLoad(d.fabric.Setup(d.computes[0]), records); err != nil {
		return fmt.Errorf("%s bulk load: %w", d.index, err)
	}
	return nil
}
