package all_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	_ "github.com/dmbench/dmbench/indexes/all"
)

// An index counts only once it passes the conformance suite: every
// registered index has a conformance_test.go in its own folder that runs
// indexes/indextest on it by name.
func TestEveryIndexHasAConformanceTest(t *testing.T) {
	for _, s := range indexes.Specs() {
		path := filepath.Join("..", s.Name, "conformance_test.go")
		src, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("index %s has no conformance test: %v", s.Name, err)
			continue
		}
		call := regexp.MustCompile(`indextest\.(Run\(t, |Suite\{Index: )"` + regexp.QuoteMeta(s.Name) + `"`)
		if !call.Match(src) {
			t.Errorf("%s does not run indextest.Run or indextest.Suite on %q", path, s.Name)
		}
	}
}
