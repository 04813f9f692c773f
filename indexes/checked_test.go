package indexes

import (
	"errors"
	"strings"
	"testing"
)

// fakeCore records the calls Checked makes.
type fakeCore struct {
	calls []string
	err   error // what Put returns
}

func (f *fakeCore) Begin(op string, _ []byte) error {
	f.calls = append(f.calls, "begin "+op)
	return nil
}
func (f *fakeCore) End(err error) error { f.calls = append(f.calls, "end"); return err }
func (f *fakeCore) Get([]byte) ([]byte, bool, error) {
	f.calls = append(f.calls, "get")
	return nil, false, nil
}
func (f *fakeCore) Put(_, _ []byte, k WriteKind) error {
	f.calls = append(f.calls, "put")
	return f.err
}
func (f *fakeCore) Range([]byte, int, func(key, val []byte) bool) error {
	f.calls = append(f.calls, "range")
	return nil
}

func TestCheckedBracketsChecksAndWraps(t *testing.T) {
	core := &fakeCore{}
	c := Checked("fake", 8, 4, core)
	if err := c.Insert(make([]byte, 7), make([]byte, 4)); err == nil || err.Error() != "fake: insert: key of 7 bytes, want 8" {
		t.Errorf("short key: %v", err)
	}
	if err := c.Update(make([]byte, 8), make([]byte, 5)); err == nil || err.Error() != "fake: update: value of 5 bytes, want 4" {
		t.Errorf("long value: %v", err)
	}
	if strings.Join(core.calls, ",") != "begin update" {
		t.Errorf("calls %v: a bad key reaches nothing, a bad value only Begin", core.calls)
	}
	core.calls, core.err = nil, ErrNotFound
	if err := c.Delete(make([]byte, 8)); err != ErrNotFound {
		t.Errorf("delete of an absent key: %v, want ErrNotFound unwrapped", err)
	}
	core.err = errors.New("boom")
	if err := c.Insert(make([]byte, 8), make([]byte, 4)); err == nil || !strings.HasPrefix(err.Error(), "fake: insert 0000000000000000: boom") {
		t.Errorf("failed insert: %v", err)
	}
	c.Search(make([]byte, 8))
	c.Scan(make([]byte, 8), 3, nil)
	want := "begin delete,put,end,begin insert,put,end,begin search,get,end,begin scan,range,end"
	if got := strings.Join(core.calls, ","); got != want {
		t.Errorf("calls %s, want %s", got, want)
	}
	if CoreOf(c) != core || CoreOf(nil) != nil {
		t.Error("CoreOf does not return the wrapped core")
	}
}
