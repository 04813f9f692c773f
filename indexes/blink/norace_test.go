//go:build !race

package blink_test

const raceEnabled = false
