package indexes

import (
	"strings"
	"testing"
)

// A numeric parameter may also accept words (DEX's subtreelevel=auto):
// the words and the numbers in range resolve, anything else is an error
// naming both.
func TestNumericParameterWords(t *testing.T) {
	s := Spec{Name: "x", Params: []Param{{Name: "level", Kind: KindInt, Default: "auto", Min: 0, Max: 16, Values: []string{"auto"}}}}
	for _, v := range []string{"auto", "0", "16"} {
		p, err := s.Resolve(map[string]string{"level": v})
		if err != nil || p["level"] != v {
			t.Errorf("level=%s: %v, %v", v, p, err)
		}
	}
	if p, err := s.Resolve(nil); err != nil || p["level"] != "auto" {
		t.Errorf("default: %v, %v", p, err)
	}
	for _, v := range []string{"17", "high", "1.5"} {
		_, err := s.Resolve(map[string]string{"level": v})
		if err == nil || !strings.Contains(err.Error(), `parameter level = "`+v+`": want an integer from 0 to 16, or auto`) {
			t.Errorf("level=%s: error %v", v, err)
		}
	}
}
