//go:build !race

package sherman

// scale is 1 without the race detector (see race_test.go).
const scale = 1
