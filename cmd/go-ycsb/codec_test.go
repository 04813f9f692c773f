package main

import (
	"bytes"
	"maps"
	"strings"
	"testing"
)

// Zero padding keeps go-ycsb's string order, so scans mean what they mean
// in go-ycsb.
func TestKeysKeepOrder(t *testing.T) {
	c := codec{keySize: 24}
	keys := []string{"user1", "user10", "user2", "user6284781860667377211", "user9", "usera", "v", "user"}
	for _, a := range keys {
		for _, b := range keys {
			ka, kb := make([]byte, 24), make([]byte, 24)
			if err := c.key(ka, a); err != nil {
				t.Fatal(err)
			}
			if err := c.key(kb, b); err != nil {
				t.Fatal(err)
			}
			if got, want := bytes.Compare(ka, kb), strings.Compare(a, b); got != want {
				t.Errorf("%q vs %q: keys compare %d, strings %d", a, b, got, want)
			}
		}
	}
}

func TestBadKeys(t *testing.T) {
	c := codec{keySize: 8}
	for key, want := range map[string]string{
		"user12345":               "longer than dm.keysize=8: raise dm.keysize to at least 9",
		"":                        "empty key",
		"ab\x00":                  "ends in a NUL byte",
		strings.Repeat("\xff", 8): "all 0xff bytes",
	} {
		err := c.key(make([]byte, 8), key)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("key %q: error %v, want one saying %q", key, err, want)
		}
	}
}

// Field i sits at offset i*fieldlength, cut to its slot and to the value
// size; fields round-trip when they fit.
func TestValueLayout(t *testing.T) {
	c := codec{valueSize: 10, fieldCount: 3, fieldLength: 4}
	val := make([]byte, 10)
	if err := c.value(val, map[string][]byte{"field0": []byte("abcdef"), "field2": []byte("xyz")}); err != nil {
		t.Fatal(err)
	}
	if want := []byte("abcd\x00\x00\x00\x00xy"); !bytes.Equal(val, want) {
		t.Errorf("value %q, want %q", val, want)
	}
	for _, tc := range []struct {
		want []string
		got  map[string][]byte
	}{
		{nil, map[string][]byte{"field0": []byte("abcd"), "field2": []byte("xy")}},
		{[]string{"field2", "field1", "name"}, map[string][]byte{"field2": []byte("xy")}},
	} {
		if got := c.fields(val, tc.want); !maps.EqualFunc(got, tc.got, bytes.Equal) {
			t.Errorf("fields(%q) = %q, want %q", tc.want, got, tc.got)
		}
	}
	for _, name := range []string{"field3", "field01", "field-1", "name"} {
		if err := c.value(val, map[string][]byte{name: []byte("v")}); err == nil {
			t.Errorf("field %q accepted; records have field0 to field2", name)
		}
	}
}

// A value written as go-ycsb's core workload writes it, ten fields,
// comes back whole when dm.valuesize holds them all.
func TestValueRoundTrip(t *testing.T) {
	c := codec{valueSize: 1000, fieldCount: 10, fieldLength: 100}
	fields := map[string][]byte{}
	for i := range 10 {
		fields["field"+string(rune('0'+i))] = bytes.Repeat([]byte{byte('a' + i)}, 100)
	}
	val := make([]byte, 1000)
	if err := c.value(val, fields); err != nil {
		t.Fatal(err)
	}
	if got := c.fields(val, nil); !maps.EqualFunc(got, fields, bytes.Equal) {
		t.Errorf("fields came back as %q", got)
	}
}
