//go:build !race

package rolex_test

const raceEnabled = false
