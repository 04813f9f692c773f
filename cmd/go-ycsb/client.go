package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/magiconair/properties"
	"github.com/pingcap/go-ycsb/pkg/client"
	"github.com/pingcap/go-ycsb/pkg/measurement"
	"github.com/pingcap/go-ycsb/pkg/prop"
	"github.com/pingcap/go-ycsb/pkg/util"
	_ "github.com/pingcap/go-ycsb/pkg/workload" // registers the core workload
	"github.com/pingcap/go-ycsb/pkg/ycsb"

	"github.com/dmbench/dmbench/indexes"
)

// runClient is go-ycsb's load (transactions false) and run: the workload's
// threads drive the DB through client.DbWrapper, which measures each call,
// and measurement.Output prints the summary; closing the DB then prints
// dmbench's view.
func runClient(ctx context.Context, command, dbName string, p *properties.Properties) error {
	threads, err := intProperty(p, prop.ThreadCount, 1, 1, 1<<20)
	if err != nil {
		return err
	}
	// go-ycsb's progress ticker panics on an interval below a second.
	if _, err := intProperty(p, prop.LogInterval, 10, 1, 1<<31); err != nil {
		return err
	}
	count, countName, err := operations(p, command == "run")
	if err != nil {
		return err
	}
	if count < threads {
		// go-ycsb's client would exit the process with status 255.
		return fmt.Errorf("property %s=%d: want at least one operation per thread (threadcount=%d)", countName, count, threads)
	}
	d, wl, err := setup(dbName, p)
	if err != nil {
		return err
	}
	fmt.Println("***************** properties *****************")
	keys := p.Keys()
	slices.Sort(keys)
	for _, k := range keys {
		v, _ := p.Get(k)
		fmt.Printf("%q=%q\n", k, v)
	}
	fmt.Println("**********************************************")
	if err := preload(ctx, d, wl, p, int(threads)); err != nil {
		return errors.Join(err, d.fabric.Close(), wl.Close())
	}
	start := time.Now()
	client.NewClient(p, wl, client.DbWrapper{DB: d}).Run(ctx)
	fmt.Println("**********************************************")
	fmt.Printf("Run finished, takes %s\n", time.Since(start))
	measurement.Output()
	err = errors.Join(d.Close(), wl.Close())
	if ctx.Err() != nil {
		// go-ycsb exits 0 here; a cut-short run must not pass for a whole one.
		err = errors.Join(err, errors.New("interrupted: the results above cover only the operations done before"))
	}
	return err
}

// operations is how many operations a load (records to insert) or a run
// performs, and the property that says so.
func operations(p *properties.Properties, transactions bool) (int64, string, error) {
	name := prop.RecordCount
	if transactions {
		name = prop.OperationCount
	} else if _, ok := p.Get(prop.InsertCount); ok {
		name = prop.InsertCount
	}
	n, err := intProperty(p, name, 0, 0, 1<<48)
	return n, name, err
}

// setup makes the measurement, the DB and the workload, in an order that
// reports a bad dm.* property before the workload prints anything.
func setup(dbName string, p *properties.Properties) (*db, ycsb.Workload, error) {
	// go-ycsb's measurement panics on these at its first use.
	if v := p.GetString(prop.MeasurementType, prop.MeasurementTypeDefault); !slices.Contains([]string{"histogram", "raw", "csv"}, v) {
		return nil, nil, fmt.Errorf("property %s=%q: want histogram, raw or csv", prop.MeasurementType, v)
	}
	if v := p.GetString(prop.OutputStyle, util.OutputStylePlain); !slices.Contains([]string{util.OutputStylePlain, util.OutputStyleTable, util.OutputStyleJson}, v) {
		return nil, nil, fmt.Errorf("property %s=%q: want plain, table or json", prop.OutputStyle, v)
	}
	measurement.InitMeasure(p)
	creator := ycsb.GetDBCreator(dbName)
	if creator == nil {
		return nil, nil, fmt.Errorf("db %q is not one of dmbench's indexes: %s", dbName, strings.Join(indexes.Names(), ", "))
	}
	ydb, err := creator.Create(p)
	if err != nil {
		return nil, nil, err
	}
	d := ydb.(*db) // every DB registered here is one
	name := p.GetString(prop.Workload, "core")
	wc := ycsb.GetWorkloadCreator(name)
	if wc == nil {
		return nil, nil, errors.Join(fmt.Errorf("property %s=%q: want core", prop.Workload, name), d.fabric.Close())
	}
	wl, err := wc.Create(p)
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("workload %s: %w", name, err), d.fabric.Close())
	}
	return d, wl, nil
}
