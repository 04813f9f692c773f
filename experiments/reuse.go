package experiments

import (
	"io/fs"
	"maps"
	"path/filepath"
	"strings"

	"github.com/dmbench/dmbench/bench"
	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/workloads"
)

// Figures share runs: Figure 3 of the DMTree paper overlays Figure 12's
// sweeps, and Dolphin's Figure 7 repeats Figure 6's baselines. A run is a
// function of its configuration alone, so a sweep takes a result that
// another figure's sweep saved under the same results root and scale
// instead of running it again, and keeps a copy in its own runs folder so
// that each figure's folder stands alone.

// otherRuns maps the configuration hash of every result saved under root
// at scale, in any figure's runs folder, to its file. Files are visited
// in lexical order and the first of a hash is kept, so the choice does
// not depend on the file system.
func otherRuns(root, scale string) map[string]string {
	if root == "" {
		root = "."
	}
	found := map[string]string{}
	// A folder that cannot be read holds nothing to reuse; the sweep then
	// runs its points, which is always correct.
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return nil
		}
		dir := filepath.Dir(path)
		if filepath.Base(dir) != scale || !strings.HasSuffix(filepath.Base(filepath.Dir(dir)), ".runs") {
			return nil
		}
		name := strings.TrimSuffix(d.Name(), ".json")
		i := strings.LastIndex(name, "__")
		if i < 0 {
			return nil
		}
		if h := name[i+2:]; found[h] == "" {
			found[h] = path
		}
		return nil
	})
	return found
}

// reuse reads the result another figure saved at path for configuration
// c. It returns nil when the file does not parse or its recorded
// configuration differs from c (a collision of the short hash): the
// point then runs. Runs with a timeline or a repartitioning record more
// than the configuration shows and are never taken from elsewhere.
func reuse(path string, c *bench.Config) *bench.Result {
	if c.TimelineNs != 0 || c.Repartition != nil {
		return nil
	}
	r, err := bench.ReadResult(path)
	if err != nil || r.Model != cost.ModelVersion || !sameRun(&r.Config, c) {
		return nil
	}
	return r
}

// sameRun reports whether a saved run's recorded configuration is c's.
// The record holds the index's parameters with their defaults filled in,
// so each parameter c sets must match and the rest are the defaults.
func sameRun(rec *bench.ConfigRecord, c *bench.Config) bool {
	if rec.Fabric != c.Fabric || (c.Profile != "" && rec.Profile != c.Profile) ||
		rec.ComputeNodes != c.ComputeNodes || rec.MemoryNodes != c.MemoryNodes ||
		rec.Threads != c.Threads || rec.Coroutines != c.Coroutines ||
		rec.MemoryCores != c.MemoryCores || rec.ComputeCores != c.ComputeCores ||
		rec.CacheBytes != c.CacheBytes || rec.Mode != c.Mode.String() || rec.Seed != c.Seed ||
		rec.Index != c.Index || rec.MaxPhaseNs != c.MaxPhaseNs ||
		(c.MemoryBytes != 0 && rec.MemoryBytes != c.MemoryBytes) {
		return false
	}
	for k, v := range c.Params {
		if rec.Params[k] != v {
			return false
		}
	}
	return maps.Equal(traceBase(rec.Workload), traceBase(c.Workload.Properties()))
}

// traceBase names a trace by its file name, as configHash does.
func traceBase(props map[string]string) map[string]string {
	if tf, ok := props[workloads.PropTraceFile]; ok {
		props = maps.Clone(props)
		props[workloads.PropTraceFile] = filepath.Base(tf)
	}
	return props
}
