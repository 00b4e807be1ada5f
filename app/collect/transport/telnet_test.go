package transport

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"
)

func b(parts ...any) []byte {
	var out []byte
	for _, p := range parts {
		switch v := p.(type) {
		case string:
			out = append(out, v...)
		case int:
			out = append(out, byte(v))
		case []byte:
			out = append(out, v...)
		}
	}
	return out
}

// negotiationStream is what a chatty telnet server sends: option requests,
// a subnegotiation, an escaped 0xFF and an NVT "CR NUL", around data.
var negotiationStream = b(
	tnIAC, tnWILL, optEcho, tnIAC, tnWILL, optSGA, tnIAC, tnDO, optNAWS,
	"hello",
	tnIAC, tnDO, 24, // terminal type: refused
	tnIAC, tnWILL, 5, // status: refused
	tnIAC, tnDO, optEcho, // we do not echo
	" ",
	tnIAC, tnSB, 24, 1, tnIAC, tnIAC, tnIAC, tnSE, // subnegotiation with an escaped 0xFF inside
	"world", tnIAC, tnIAC, "!", tnIAC, 241, // IAC NOP
	"\r", 0, "next\r\n",
	tnIAC, tnWILL, optEcho, // repeated: already on, no answer
)

const negotiationText = "hello world\xff!\rnext\r\n"

// wantReplies are the answers negotiationStream must draw, in order.
var wantReplies = b(
	tnIAC, tnDO, optEcho,
	tnIAC, tnDO, optSGA,
	tnIAC, tnWILL, optNAWS, tnIAC, tnSB, optNAWS, 0x01, 0xFF, 0xFF, 0, 0, tnIAC, tnSE, // 511×0, 0xFF doubled
	tnIAC, tnWONT, 24,
	tnIAC, tnDONT, 5,
	tnIAC, tnWONT, optEcho,
)

func TestTelnetNegotiation(t *testing.T) {
	replies := make(chan []byte, 1)
	srv := startTCPServer(t, func(s *tcpServer, c net.Conn) {
		c.SetDeadline(time.Now().Add(hangGuard))
		if _, err := c.Write(negotiationStream); err != nil {
			return
		}
		got := make([]byte, 0, len(wantReplies))
		buf := make([]byte, 256)
		for len(got) < len(wantReplies) {
			n, err := c.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				break
			}
		}
		replies <- got
	})
	c, err := DialTelnet(context.Background(), srv.options())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(hangGuard))
	data, err := io.ReadAll(c) // the server hangs up after the answers
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != negotiationText {
		t.Errorf("data = %q, want %q", data, negotiationText)
	}
	if got := <-replies; !bytes.Equal(got, wantReplies) {
		t.Errorf("answers = % x\nwant      % x", got, wantReplies)
	}
}

// TestTelnetSplitSequences feeds the stream one byte per read, so every
// sequence is cut at every point.
func TestTelnetSplitSequences(t *testing.T) {
	client, server := net.Pipe()
	defer server.Close()
	c := newTelnetConn(client, DefaultTermWidth, 0)
	defer c.Close()

	answers := make(chan []byte, 1)
	go func() { // drain our answers, which net.Pipe would otherwise block
		var got []byte
		buf := make([]byte, 64)
		for {
			n, err := server.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				answers <- got
				return
			}
		}
	}()
	go func() {
		for _, x := range negotiationStream {
			if _, err := server.Write([]byte{x}); err != nil {
				return
			}
		}
	}()

	c.SetReadDeadline(time.Now().Add(hangGuard))
	var data []byte
	buf := make([]byte, 3)
	for len(data) < len(negotiationText) {
		n, err := c.Read(buf)
		if n == 0 && err == nil {
			t.Fatal("Read returned 0 bytes and no error")
		}
		data = append(data, buf[:n]...)
		if err != nil {
			t.Fatalf("after %q: %v", data, err)
		}
	}
	if string(data) != negotiationText {
		t.Errorf("data = %q, want %q", data, negotiationText)
	}
	c.Close()
	server.Close()
	if got := <-answers; !bytes.Equal(got, wantReplies) {
		t.Errorf("answers = % x\nwant      % x", got, wantReplies)
	}
}

func TestTelnetWriteEscapes(t *testing.T) {
	got := make(chan []byte, 1)
	srv := startTCPServer(t, func(s *tcpServer, c net.Conn) {
		c.SetDeadline(time.Now().Add(hangGuard))
		line, _ := bufio.NewReader(c).ReadBytes('\n')
		got <- line
	})
	c, err := DialTelnet(context.Background(), srv.options())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if n, err := c.Write([]byte("a\xffb\r\n")); n != 5 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if g := <-got; string(g) != "a\xff\xffb\r\n" {
		t.Errorf("wire = %q, want 0xFF doubled", g)
	}
}

func TestTelnetReadDeadline(t *testing.T) {
	srv := silentServer(t)
	c, err := DialTelnet(context.Background(), srv.options())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	var ne net.Error
	if _, err := c.Read(make([]byte, 10)); !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("Read from a silent server: %v, want a timeout", err)
	}
}

// step is one exchange of a scripted telnet login: the server sends send,
// then, when expect is set, reads one line and checks it.
type step struct{ send, expect string }

func scriptedServer(t *testing.T, steps []step, hangUp bool) (*tcpServer, chan error) {
	errs := make(chan error, 1)
	report := func(err error) { // first connection's verdict; never blocks
		select {
		case errs <- err:
		default:
		}
	}
	srv := startTCPServer(t, func(s *tcpServer, c net.Conn) {
		c.SetDeadline(time.Now().Add(hangGuard))
		// Ask the client to let us echo, as real gear does; the answer is
		// skipped by reading lines that end in "\n" only.
		c.Write(b(tnIAC, tnWILL, optEcho, tnIAC, tnWILL, optSGA))
		r := bufio.NewReader(c)
		for _, st := range steps {
			if _, err := c.Write([]byte(st.send)); err != nil {
				report(err)
				return
			}
			if st.expect == "" {
				continue
			}
			line, err := r.ReadString('\n')
			if err != nil {
				report(err)
				return
			}
			// strip the negotiation answers that precede the first line
			if i := strings.LastIndexByte(line, tnIAC); i >= 0 {
				line = line[i+3:]
			}
			if strings.TrimRight(line, "\r\n") != st.expect {
				report(errors.New("got line " + line + ", want " + st.expect))
				return
			}
		}
		report(nil)
		if !hangUp {
			<-s.done
		}
	})
	return srv, errs
}

func TestTelnetLogin(t *testing.T) {
	tests := []struct {
		name     string
		steps    []step
		hangUp   bool // the server hangs up after the script
		wantErr  error
		thenRead string // what the driver reads after a successful login
	}{
		{
			name: "cisco username and password",
			steps: []step{
				{"\r\nUser Access Verification\r\n\r\nUsername: ", "admin"},
				{"Password: ", "pw"},
				{"\r\nrouter>", ""},
			},
			thenRead: `router>$`,
		},
		{
			name: "fastpath user prompt",
			steps: []step{
				{"\r\n(M4300-52G)\r\nUser:", "admin"},
				{"Password:", "pw"},
				{"\r\n(M4300-52G) >", ""},
			},
			thenRead: `\(M4300-52G\) >$`,
		},
		{
			name: "linux login with motd",
			steps: []step{
				{"Ubuntu 24.04\r\nhost login: ", "admin"},
				{"Password: ", "pw"},
				{"\r\nLast login: Mon Jan  1 from 10.0.0.1\r\nadmin@host:~$ ", ""},
			},
			thenRead: `admin@host:~\$ $`,
		},
		{
			name: "password only",
			steps: []step{
				{"\r\n\r\nUser Access Verification\r\n\r\nPassword: ", "pw"},
				{"\r\nswitch>", ""},
			},
			thenRead: `switch>$`,
		},
		{
			name: "login invalid",
			steps: []step{
				{"Username: ", "admin"},
				{"Password: ", "pw"},
				{"\r\n% Login invalid\r\n\r\nUsername: ", ""},
			},
			wantErr: ErrAuth,
		},
		{
			name: "login incorrect",
			steps: []step{
				{"host login: ", "admin"},
				{"Password: ", "pw"},
				{"\r\nLogin incorrect\r\nhost login: ", ""},
			},
			wantErr: ErrAuth,
		},
		{
			name: "password asked again",
			steps: []step{
				{"Password: ", "pw"},
				{"\r\nPassword: ", ""},
			},
			wantErr: ErrAuth,
		},
		{
			name: "authentication failed",
			steps: []step{
				{"Username: ", "admin"},
				{"Password: ", "pw"},
				{"\r\n% Authentication failed\r\n", ""},
			},
			wantErr: ErrAuth,
		},
		{
			name: "hang up after the password",
			steps: []step{
				{"Username: ", "admin"},
				{"Password: ", "pw"},
			},
			hangUp:  true,
			wantErr: ErrAuth,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, serverErr := scriptedServer(t, tt.steps, tt.hangUp)
			c, err := DialTelnet(context.Background(), srv.options())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
			defer cancel()
			err = TelnetLogin(ctx, c, "admin", "pw")
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "pw") {
					t.Errorf("error leaks the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := <-serverErr; err != nil {
				t.Fatalf("server: %v", err)
			}
			got := readUntilT(t, c, tt.thenRead)
			if regexp.MustCompile(`(?i)password:`).MatchString(got) {
				t.Errorf("login output handed back to the driver still has the dialogue: %q", got)
			}
		})
	}
}

func TestTelnetSilentServer(t *testing.T) {
	srv := silentServer(t)
	login := func(ctx context.Context) error {
		c, err := DialTelnet(ctx, srv.options())
		if err != nil {
			return err
		}
		defer c.Close()
		res := make(chan error, 1)
		go func() { res <- TelnetLogin(ctx, c, "admin", "pw") }()
		select {
		case err := <-res:
			return err
		case <-time.After(hangGuard):
			t.Fatal("TelnetLogin did not return on a silent server")
			return nil
		}
	}

	t.Run("deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		if err := login(ctx); !errors.Is(err, ErrConnect) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want ErrConnect wrapping context.DeadlineExceeded", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			<-srv.accepted
			cancel()
		}()
		if err := login(ctx); !errors.Is(err, ErrConnect) || !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want ErrConnect wrapping context.Canceled", err)
		}
	})
}

func TestTelnetConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	if _, err := DialTelnet(context.Background(), Options{Host: "127.0.0.1", Port: port}); !errors.Is(err, ErrConnect) {
		t.Fatalf("err = %v, want ErrConnect", err)
	}
}

func TestReadUntilByteCap(t *testing.T) {
	srv := startTCPServer(t, func(s *tcpServer, c net.Conn) {
		c.SetDeadline(time.Now().Add(hangGuard))
		chunk := bytes.Repeat([]byte("x"), 1024)
		for range 1024 { // far more than the cap, never the pattern
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
	})
	c, err := DialTelnet(context.Background(), srv.options())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	got, err := ReadUntil(ctx, c, regexp.MustCompile(`never`), 10000)
	if err == nil || len(got) != 10000 {
		t.Fatalf("ReadUntil = %d bytes, %v; want exactly the 10000-byte cap and an error", len(got), err)
	}
}
