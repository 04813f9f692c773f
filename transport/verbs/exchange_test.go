package verbs

import (
	"reflect"
	"strings"
	"testing"
)

func TestConnectMessagesRoundTrip(t *testing.T) {
	q := QPInfo{LID: 7, QPN: 0x1234, PSN: 0xabcdef}
	q.GID[0], q.GID[15] = 0xfe, 1
	req := ConnectRequest{From: 3, QP: q}
	got, err := DecodeConnectRequest(req.Encode())
	if err != nil || got != req {
		t.Errorf("request round trip: %+v, %v; want %+v", got, err, req)
	}
	rep := ConnectReply{QP: q, Regions: []RemoteRegion{{Addr: 0x7f0000001000, RKey: 99, Size: 1 << 30}, {Addr: 0x7f1000000000, RKey: 100, Size: 4096}}}
	back, err := DecodeConnectReply(rep.Encode())
	if err != nil || !reflect.DeepEqual(back, rep) {
		t.Errorf("reply round trip: %+v, %v; want %+v", back, err, rep)
	}
}

func TestConnectMessagesMalformed(t *testing.T) {
	req := ConnectRequest{From: 1}.Encode()
	if _, err := DecodeConnectRequest(req[:len(req)-1]); err == nil || !strings.Contains(err.Error(), "connect request of 27 bytes, want 28") {
		t.Errorf("short request: %v", err)
	}
	rep := ConnectReply{Regions: []RemoteRegion{{Addr: 1}}}.Encode()
	for _, b := range [][]byte{rep[:10], rep[:len(rep)-1], append(rep, 0)} {
		if _, err := DecodeConnectReply(b); err == nil || !strings.Contains(err.Error(), "verbs: connect reply") {
			t.Errorf("reply of %d bytes: %v, want an error naming the connect reply", len(b), err)
		}
	}
}

func TestNoDeviceErrorNamesAlternatives(t *testing.T) {
	for _, want := range []string{"no RDMA device", "--fabric sim", "--fabric tcp"} {
		if !strings.Contains(ErrNoDevice.Error(), want) {
			t.Errorf("ErrNoDevice %q does not say %q", ErrNoDevice, want)
		}
	}
}
