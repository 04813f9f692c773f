package experiments

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
)

//go:embed specs
var specFS embed.FS

var (
	catalogOnce sync.Once
	catalog     map[string]*Spec
	catalogErr  error
)

// load parses every embedded spec once.
func load() (map[string]*Spec, error) {
	catalogOnce.Do(func() {
		catalog = map[string]*Spec{}
		catalogErr = fs.WalkDir(specFS, "specs", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || path.Ext(p) != ".yaml" {
				return err
			}
			b, err := specFS.ReadFile(p)
			if err != nil {
				return err
			}
			s, err := Parse("experiments/"+p, b)
			if err != nil {
				return err
			}
			if want := strings.TrimSuffix(strings.TrimPrefix(p, "specs/"), ".yaml"); s.ID != want {
				return fmt.Errorf("spec experiments/%s: field id: %q does not match its file name (want %q)", p, s.ID, want)
			}
			catalog[s.ID] = s
			return nil
		})
	})
	return catalog, catalogErr
}

// IDs lists the figures of the catalog, sorted.
func IDs() ([]string, error) {
	c, err := load()
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(c))
	for id := range c {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, nil
}

// Lookup returns a figure's spec; an unknown id lists the known ones.
func Lookup(id string) (*Spec, error) {
	c, err := load()
	if err != nil {
		return nil, err
	}
	if s, ok := c[id]; ok {
		return s, nil
	}
	ids, _ := IDs()
	return nil, fmt.Errorf("figure %q is not in the catalog; known figures: %s", id, strings.Join(ids, ", "))
}

// Match returns the figures whose id matches a pattern: an id, a paper
// ("dex"), a figure name across papers ("fig6"), or "all".
func Match(pattern string) ([]string, error) {
	ids, err := IDs()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, id := range ids {
		paper, fig, _ := strings.Cut(id, "/")
		if id == pattern || paper == pattern || fig == pattern || pattern == "all" {
			out = append(out, id)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("figure %q is not in the catalog; known figures: %s", pattern, strings.Join(ids, ", "))
	}
	return out, nil
}
