package testkit

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
)

// Resolver is a DNS resolver that asks a server on 127.0.0.1 which
// knows only answers (names without the trailing dot): the A and AAAA
// records of each name, "name not found" for any other. For tests of
// what happens after a name resolves to an address no real name has here.
func Resolver(t testing.TB, answers map[string][]netip.Addr) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { pc.Close(); <-done })
	go func() {
		defer close(done)
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if reply, err := dnsAnswer(buf[:n], answers); err == nil {
				_, _ = pc.WriteTo(reply, from)
			}
		}
	}()
	addr := pc.LocalAddr().String()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", addr)
	}}
}

// dnsAnswer answers one query (RFC 1035 §4): the question copied, then
// the records of its type.
func dnsAnswer(q []byte, answers map[string][]netip.Addr) ([]byte, error) {
	if len(q) < 12 || binary.BigEndian.Uint16(q[4:6]) != 1 {
		return nil, errors.New("not one question")
	}
	var labels []string
	i := 12
	for {
		if i >= len(q) {
			return nil, errors.New("short question")
		}
		l := int(q[i])
		i++
		if l == 0 {
			break
		}
		if l > 63 || i+l > len(q) {
			return nil, errors.New("bad label")
		}
		labels = append(labels, strings.ToLower(string(q[i:i+l])))
		i += l
	}
	if i+4 > len(q) {
		return nil, errors.New("short question")
	}
	qtype := binary.BigEndian.Uint16(q[i : i+2])
	question := q[12 : i+4]
	addrs, known := answers[strings.Join(labels, ".")]
	var records [][]byte
	for _, a := range addrs {
		var typ uint16
		switch {
		case a.Is4() && qtype == 1:
			typ = 1
		case a.Is6() && qtype == 28:
			typ = 28
		default:
			continue
		}
		rec := []byte{0xc0, 12} // the name: a pointer to the question's
		rec = binary.BigEndian.AppendUint16(rec, typ)
		rec = binary.BigEndian.AppendUint16(rec, 1) // IN
		rec = binary.BigEndian.AppendUint32(rec, 60)
		raw := a.AsSlice()
		rec = binary.BigEndian.AppendUint16(rec, uint16(len(raw)))
		records = append(records, append(rec, raw...))
	}
	flags := uint16(0x8180) // a response, recursion desired and available
	if !known {
		flags |= 3 // name not found
	}
	out := append([]byte{}, q[0:2]...)
	out = binary.BigEndian.AppendUint16(out, flags)
	out = binary.BigEndian.AppendUint16(out, 1)
	out = binary.BigEndian.AppendUint16(out, uint16(len(records)))
	out = binary.BigEndian.AppendUint16(out, 0)
	out = binary.BigEndian.AppendUint16(out, 0)
	out = append(out, question...)
	for _, r := range records {
		out = append(out, r...)
	}
	return out, nil
}
