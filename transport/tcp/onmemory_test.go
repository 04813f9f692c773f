package tcp

import (
	"errors"
	"strings"
	"testing"

	"github.com/dmbench/dmbench/transport"
)

// A device that serves a node's memory itself sees every layout and region
// before anyone learns of it, with the bytes behind each region; its
// refusal fails the layout.
func TestOnMemorySeesEveryRegion(t *testing.T) {
	var seen []string
	srv, err := NewServer(ServerConfig{Key: []byte("k"), Cores: 1, OnMemory: func(m Memory) error {
		l := m.Layout()
		last := l.Regions[len(l.Regions)-1]
		if got := uint64(len(m.RegionBytes(len(l.Regions) - 1))); got < last.Size {
			t.Errorf("region %s: %d bytes behind %d", last.Name, got, last.Size)
		}
		seen = append(seen, last.Name)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if err := srv.Configure(3, transport.ModePaper, 1<<16, 1<<12, true, true); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.mem().addRegion("extra", 4096, false); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(seen, ","); got != "main,device,extra" {
		t.Errorf("OnMemory saw %s, want main,device,extra", got)
	}

	refuse, err := NewServer(ServerConfig{Key: []byte("k"), Cores: 1, OnMemory: func(Memory) error {
		return errors.New("cannot register")
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer refuse.Close()
	if err := refuse.Configure(3, transport.ModePaper, 1<<16, 0, true, true); err == nil || !strings.Contains(err.Error(), "cannot register") {
		t.Errorf("a refused layout: error %v, want the device's", err)
	}
}
