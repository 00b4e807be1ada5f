package transport

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// Issue 11, defect 4: the telnet option parser reads whatever a device (or
// anything listening on its address) sends. FuzzTelnet feeds it two
// streams per input:
//
//   - raw: the fuzzed bytes as they are, decoded in one piece and in
//     chunks. No panic; the data out is never longer than the bytes in;
//     chunking changes nothing (the decoder's state spans reads); the
//     answers are well-formed IAC sequences, bounded by the requests.
//   - framed: fuzzed data, escaped as a server must (0xFF doubled, CR
//     followed by NUL), with well-formed protocol sequences built from
//     the second input put between its bytes, sent over real TCP on 127.0.0.1
//     in fuzzed chunk sizes and read back through telnetConn.Read. What
//     comes out is exactly the data.

// fuzzReplyMax is the longest answer to one option command: IAC WILL NAWS
// and the NAWS subnegotiation with every size byte doubled.
const fuzzReplyMax = 3 + 3 + 8 + 2

func FuzzTelnet(f *testing.F) {
	f.Add([]byte("Username: "), []byte{}, uint8(0))
	f.Add([]byte("router>\r\n"), []byte{0, tnWILL, optEcho, 0, tnWILL, optSGA, 0, tnDO, optNAWS}, uint8(1))
	f.Add([]byte("\xff\xff\r\x00\r\n"), []byte{1, 24, 1, 2, 3}, uint8(2))
	f.Add([]byte{tnIAC, tnWILL, optEcho, tnIAC, tnDO, optNAWS, 'a', tnIAC, tnIAC, 'b'}, []byte{2, 0, 2, 241}, uint8(3))
	f.Add([]byte{tnIAC, tnSB, 24, 1, tnIAC, tnIAC, tnIAC, tnSE, 'x'}, []byte{0, tnDONT, optNAWS, 0, tnWONT, optEcho}, uint8(5))
	f.Add([]byte{tnIAC}, []byte{0, tnDO, 99, 0, tnWILL, 99}, uint8(7))
	f.Add([]byte{tnIAC, tnSB}, []byte{1, 200}, uint8(255))
	f.Add([]byte{tnIAC, tnWILL}, []byte{3}, uint8(4))
	f.Add(bytes.Repeat([]byte{tnIAC, tnDO, optNAWS, tnIAC, tnDONT, optNAWS}, 50), bytes.Repeat([]byte{0, tnWILL, optSGA, 0, tnWONT, optSGA}, 20), uint8(9))
	f.Add([]byte("\r\x00\r\x00\x00\r"), []byte{}, uint8(1))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { ln.Close() })

	f.Fuzz(func(t *testing.T, data, proto []byte, chunk uint8) {
		size := int(chunk)%64 + 1
		fuzzRaw(t, data, size)
		fuzzFramed(t, ln, data, proto, size)
	})
}

func fuzzRaw(t *testing.T, in []byte, size int) {
	// Width and height with 0xFF bytes make NAWS double them.
	whole := newTelnetConn(nil, 0x12FF, 0xFF)
	out := make([]byte, len(in))
	n, replies := whole.decode(in, out)
	if n > len(in) {
		t.Fatalf("decoded %d data bytes from %d", n, len(in))
	}
	checkReplies(t, in, replies)

	parts := newTelnetConn(nil, 0x12FF, 0xFF)
	var pout, preplies []byte
	for i := 0; i < len(in); i += size {
		piece := in[i:min(i+size, len(in))]
		buf := make([]byte, len(piece))
		m, r := parts.decode(piece, buf)
		pout = append(pout, buf[:m]...)
		preplies = append(preplies, r...)
	}
	if !bytes.Equal(pout, out[:n]) || !bytes.Equal(preplies, replies) {
		t.Fatalf("decoding in pieces of %d differs:\nwhole  %q / %q\npieces %q / %q", size, out[:n], replies, pout, preplies)
	}
}

// checkReplies checks that replies are IAC WILL/WONT/DO/DONT answers (WILL
// NAWS followed by a window size), at most one per option command in in.
func checkReplies(t *testing.T, in, replies []byte) {
	t.Helper()
	if len(replies) > fuzzReplyMax*(len(in)/3) {
		t.Fatalf("%d bytes of answers to %d bytes in", len(replies), len(in))
	}
	for r := replies; len(r) > 0; {
		if len(r) < 3 || r[0] != tnIAC || r[1] < tnWILL || r[1] > tnDONT {
			t.Fatalf("malformed answer %q in %q", r, replies)
		}
		if r[1] != tnWILL || r[2] != optNAWS {
			r = r[3:]
			continue
		}
		r = r[3:]
		end := bytes.Index(r, []byte{tnIAC, tnSE})
		if len(r) < 3 || r[0] != tnIAC || r[1] != tnSB || r[2] != optNAWS || end < 0 {
			t.Fatalf("WILL NAWS without a window size: %q", replies)
		}
		r = r[end+2:]
	}
}

// frame escapes data as a server sends it and puts well-formed protocol
// sequences built from proto between its bytes.
func frame(data, proto []byte) []byte {
	var units [][]byte
	for p := proto; len(p) > 0; {
		kind := p[0] % 4
		p = p[1:]
		take := func() byte {
			if len(p) == 0 {
				return 0
			}
			b := p[0]
			p = p[1:]
			return b
		}
		switch kind {
		case 0: // option command
			cmd := tnWILL + take()%4
			units = append(units, []byte{tnIAC, cmd, take()})
		case 1: // subnegotiation, payload with IAC doubled
			n := int(take()) % 16
			u := []byte{tnIAC, tnSB}
			for range n {
				b := take()
				u = append(u, b)
				if b == tnIAC {
					u = append(u, tnIAC)
				}
			}
			units = append(units, append(u, tnIAC, tnSE))
		case 2: // a command without an option: NOP, DM, BRK, IP, AO, AYT, EC, EL, GA, stray SE
			cmds := []byte{241, 242, 243, 244, 245, 246, 247, 248, 249, tnSE}
			units = append(units, []byte{tnIAC, cmds[int(take())%len(cmds)]})
		case 3: // where the next unit goes: skip ahead in the data
			units = append(units, nil)
		}
	}
	var out []byte
	u := 0
	for i, b := range data {
		// Between data bytes (never between CR and its NUL) put a unit
		// when the proto asks for one here.
		for u < len(units) && (units[u] == nil || i%(u+1) == 0) {
			out = append(out, units[u]...)
			u++
			if units[u-1] == nil {
				break
			}
		}
		switch b {
		case tnIAC:
			out = append(out, tnIAC, tnIAC)
		case '\r':
			out = append(out, '\r', 0)
		default:
			out = append(out, b)
		}
	}
	for ; u < len(units); u++ {
		out = append(out, units[u]...)
	}
	return out
}

func fuzzFramed(t *testing.T, ln net.Listener, data, proto []byte, size int) {
	stream := frame(data, proto)
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server := <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	defer server.Close()
	deadline := time.Now().Add(10 * time.Second) // a hang detector only
	_ = client.SetDeadline(deadline)
	_ = server.SetDeadline(deadline)
	c := newTelnetConn(client, 200, 0xFF)

	answers := make(chan []byte, 1)
	go func() { // our answers, read until the client closes
		got, _ := io.ReadAll(server)
		answers <- got
	}()
	sent := make(chan error, 1)
	go func() {
		for i := 0; i < len(stream); i += size {
			if _, err := server.Write(stream[i:min(i+size, len(stream))]); err != nil {
				sent <- err
				return
			}
		}
		// Closing the write side ends the reads with io.EOF.
		sent <- server.(*net.TCPConn).CloseWrite()
	}()

	var got []byte
	buf := make([]byte, size)
	for {
		n, err := c.Read(buf)
		if n > len(buf) {
			t.Fatalf("Read returned %d bytes into %d", n, len(buf))
		}
		got = append(got, buf[:n]...)
		if len(got) > len(data) {
			t.Fatalf("read %d data bytes, sent %d: %q", len(got), len(data), got)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("read: %v", err)
		}
	}
	if err := <-sent; err != nil {
		t.Fatalf("send: %v", err)
	}
	client.Close()
	checkReplies(t, stream, <-answers)
	if !bytes.Equal(got, data) {
		t.Fatalf("framed %q as %q, read back %q", data, stream, got)
	}
}
