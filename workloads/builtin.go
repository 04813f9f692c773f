package workloads

import (
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// files embeds the shipped workloads so that the CLI and the experiment
// catalog can name them without a path to this folder.
//
//go:embed *.properties
var files embed.FS

// Builtins lists the names of the shipped workloads, sorted.
func Builtins() []string {
	// Glob fails only on a malformed pattern, and this one is constant.
	paths, _ := fs.Glob(files, "*.properties")
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = strings.TrimSuffix(p, ".properties")
	}
	slices.Sort(names)
	return names
}

// Builtin loads a shipped workload by name (e.g. "dex-read-only") with
// overrides on top.
func Builtin(name string, overrides Properties) (*Spec, error) {
	file := name + ".properties"
	f, err := files.Open(file)
	if err != nil {
		return nil, fmt.Errorf("workloads: no built-in workload %q; want one of %s", name, strings.Join(Builtins(), ", "))
	}
	defer f.Close()
	return Parse("workloads/"+file, f, overrides)
}
