package transport

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// uploadData is the file the tests write; it must never appear in an
// error.
var uploadData = []byte("hostname r1\nsnmp-server community " + secretLine + " RO\nend\n")

// sinkDevice records what its SCP sink received, per path.
type sinkDevice struct {
	mu    sync.Mutex
	files map[string]string // path → "C<mode> <size> <name>" and the data
}

func (d *sinkDevice) got(p string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.files[p]
}

// serve answers "scp -t <path>" exec requests with the SCP sink protocol,
// the way OpenSSH's scp does, per path: "full.cfg" refuses the header
// (no space left), "late.cfg" takes the data and then refuses it with a
// message full of control bytes, "shell.cfg" answers like a shell without
// scp, "gone.cfg" ends the session at once, "drop.cfg" hangs up after the
// header, "hang.cfg" never acknowledges the data; any other path is
// written.
func (d *sinkDevice) serve(s *tcpServer, sc *ssh.ServerConn, cmd string, ch ssh.Channel) (uint32, bool) {
	p, ok := strings.CutPrefix(cmd, "scp -t ")
	if !ok {
		ch.Stderr().Write([]byte("unknown command\n"))
		return 127, true
	}
	switch p {
	case "shell.cfg":
		ch.Write([]byte("% Invalid input detected\r\nR1#"))
		return 0, true
	case "gone.cfg":
		return 1, true
	}
	ch.Write([]byte{0})
	r := bufio.NewReader(ch)
	header, err := r.ReadString('\n')
	if err != nil {
		return 1, true
	}
	switch p {
	case "full.cfg":
		fmt.Fprintf(ch, "\x01scp: %s: No space left on device\n", p)
		return 1, true
	case "drop.cfg":
		sc.Close()
		return 0, false
	}
	f := strings.Fields(header)
	size, err := strconv.Atoi(f[1])
	if len(f) != 3 || err != nil {
		ch.Write([]byte("\x01scp: protocol error\n"))
		return 1, true
	}
	ch.Write([]byte{0})
	data := make([]byte, size+1)
	if _, err := io.ReadFull(r, data); err != nil {
		return 1, true
	}
	switch p {
	case "late.cfg":
		ch.Write([]byte("\x02scp: late.cfg: \x1b[31mwrite error\x07\r\n"))
		return 1, true
	case "hang.cfg":
		<-s.done
		return 0, false
	}
	d.mu.Lock()
	d.files[p] = strings.TrimSpace(header) + "\n" + string(data[:size])
	d.mu.Unlock()
	ch.Write([]byte{0})
	return 0, true
}

func uploadGuarded(t *testing.T, ctx context.Context, c *ExecClient, p string, data []byte, mode os.FileMode) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- SCPUpload(ctx, c.client, p, data, mode) }()
	select {
	case err := <-done:
		if err != nil && strings.Contains(err.Error(), secretLine) {
			t.Errorf("%s: the error quotes the data: %v", p, err)
		}
		return err
	case <-time.After(hangGuard):
		t.Fatalf("SCPUpload(%q) did not return", p)
		return nil
	}
}

// TestSCPUpload writes files over SCP with the mode asked for, and the
// connection serves more requests after each.
func TestSCPUpload(t *testing.T) {
	dev := &sinkDevice{files: map[string]string{}}
	srv := startExecServer(t, passwordConfig("pw"), dev.serve)
	c, _, err := dialExec(t, srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path   string
		mode   os.FileMode
		data   []byte
		header string
	}{
		{"flash:/restore.cfg", 0, uploadData, fmt.Sprintf("C0644 %d restore.cfg", len(uploadData))},
		{"/config/r.boot", 0o600, uploadData, fmt.Sprintf("C0600 %d r.boot", len(uploadData))},
		{"empty.cfg", 0o644, nil, "C0644 0 empty.cfg"},
	} {
		if err := uploadGuarded(t, context.Background(), c, tc.path, tc.data, tc.mode); err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if got, want := dev.got(tc.path), tc.header+"\n"+string(tc.data); got != want {
			t.Errorf("%s: the device received\n%q\nwant\n%q", tc.path, got, want)
		}
	}
	// At the limit is allowed.
	big := bytes.Repeat([]byte("x"), MaxSCPUpload)
	if err := uploadGuarded(t, context.Background(), c, "big.cfg", big, 0); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	if got := dev.got("big.cfg"); len(got) != len(fmt.Sprintf("C0644 %d big.cfg\n", len(big)))+len(big) {
		t.Errorf("at the limit: the device received %d bytes", len(got))
	}
}

// TestSCPUploadFailures: every failure is a clear error, bounded in time,
// that never quotes the data; what the device says is one printable line.
func TestSCPUploadFailures(t *testing.T) {
	dev := &sinkDevice{files: map[string]string{}}
	srv := startExecServer(t, passwordConfig("pw"), dev.serve)
	refusal := func(msg string) func(error) bool {
		return func(err error) bool { var e *SCPError; return errors.As(err, &e) && e.Msg == msg }
	}
	is := func(target error) func(error) bool { return func(err error) bool { return errors.Is(err, target) } }
	for _, tc := range []struct {
		path    string
		data    []byte
		mode    os.FileMode
		timeout time.Duration
		check   func(error) bool
		want    string
	}{
		{path: "full.cfg", check: refusal("scp: full.cfg: No space left on device"),
			want: "the device refused the file: scp: full.cfg: No space left on device"},
		{path: "late.cfg", check: refusal("scp: late.cfg: [31mwrite error")},
		{path: "shell.cfg", check: is(ErrSCPProtocol), want: "something other than an acknowledgement came before the file header"},
		{path: "gone.cfg", check: is(ErrSCPProtocol), want: "SCP may be disabled"},
		{path: "drop.cfg", check: is(ErrConnectionLost), want: "after the file header"},
		{path: "hang.cfg", timeout: 300 * time.Millisecond, check: is(context.DeadlineExceeded)},
		{path: "too.big", data: make([]byte, MaxSCPUpload+1), check: is(ErrFileTooLarge), want: "16777217 bytes, the limit is 16777216"},
		{path: "mode.cfg", mode: os.ModeDir | 0o755, check: func(err error) bool { return err != nil }, want: "permission bits only"},
		{path: "a b", check: is(ErrSCPPath)},
		{path: "x;reboot", check: is(ErrSCPPath)},
		{path: "flash:", check: is(ErrSCPPath), want: "file name"},
		{path: "dir/", check: is(ErrSCPPath), want: "file name"},
		{path: "dir/..", check: is(ErrSCPPath), want: "file name"},
		{path: "-r", check: is(ErrSCPPath)},
		{path: "", check: is(ErrSCPPath)},
	} {
		t.Run(tc.path, func(t *testing.T) {
			c, _, err := dialExec(t, srv, nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			data := tc.data
			if data == nil {
				data = uploadData
			}
			err = uploadGuarded(t, ctx, c, tc.path, data, tc.mode)
			if err == nil || !tc.check(err) {
				t.Fatalf("err %v", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
			if got := dev.got(tc.path); got != "" {
				t.Errorf("the device kept %q", got)
			}
		})
	}
}

// An upload cut short by its deadline closes the connection: the device
// stalled and is not asked again.
func TestSCPUploadTimeoutClosesConnection(t *testing.T) {
	dev := &sinkDevice{files: map[string]string{}}
	srv := startExecServer(t, passwordConfig("pw"), dev.serve)
	c, _, err := dialExec(t, srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := uploadGuarded(t, ctx, c, "hang.cfg", uploadData, 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v", err)
	}
	if err := uploadGuarded(t, context.Background(), c, "ok.cfg", uploadData, 0); !errors.Is(err, ErrConnectionLost) {
		t.Errorf("after a timeout: err %v, want ErrConnectionLost", err)
	}
}

// failAfter is a writer that takes n bytes, then fails as a closed
// channel does.
type failAfter struct {
	bytes.Buffer
	n int
}

func (w *failAfter) Write(p []byte) (int, error) {
	if w.Len()+len(p) > w.n {
		k := max(0, w.n-w.Len())
		w.Buffer.Write(p[:k])
		return k, io.EOF
	}
	return w.Buffer.Write(p)
}

// FuzzSCPSend feeds the sending side of an upload whatever a device could
// answer, with the channel failing after a fuzzed number of bytes: no
// panic; success only after three \0 acknowledgements; the data is sent
// only after two; no error quotes it, and a refusal is one short line of
// printable ASCII; no more of the answer is read than the protocol needs.
func FuzzSCPSend(f *testing.F) {
	f.Add([]byte{0, 0, 0}, uint16(1000))
	f.Add([]byte{0, 0, 1}, uint16(1000))
	f.Add([]byte("\x00\x01scp: f.cfg: No space left on device\n"), uint16(1000))
	f.Add([]byte("\x00\x00\x02"+strings.Repeat("\x1b[31m\xff", 400)+"\n"), uint16(1000))
	f.Add([]byte("% Invalid input\r\nR1#"), uint16(1000))
	f.Add([]byte{0}, uint16(30))
	f.Add([]byte("\x00\x00\x01no space\n"), uint16(40))
	f.Add([]byte{}, uint16(0))
	f.Fuzz(func(t *testing.T, replies []byte, limit uint16) {
		data := uploadData
		br := bytes.NewReader(replies)
		r := bufio.NewReader(br)
		w := &failAfter{n: int(limit)}
		err := scpSend(r, w, "f.cfg", data, 0o644)
		acks := 0
		for acks < 3 && acks < len(replies) && replies[acks] == 0 {
			acks++
		}
		header := fmt.Sprintf("C0644 %d f.cfg\n", len(data))
		whole := header + string(data) + "\x00"
		if err == nil && (acks < 3 || w.String() != whole) {
			t.Fatalf("success after %d acknowledgements, sent %q", acks, w.String())
		}
		if acks == 3 && len(whole) <= int(limit) && err != nil {
			t.Fatalf("three acknowledgements and a working channel, yet %v", err)
		}
		if sent := w.String(); len(sent) > len(header) && acks < 2 {
			t.Fatalf("data sent after %d acknowledgements", acks)
		}
		if !strings.HasPrefix(whole, w.String()) {
			t.Fatalf("sent %q", w.String())
		}
		if err == nil {
			return
		}
		if strings.Contains(err.Error(), secretLine) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("error %q", err)
		}
		var refused *SCPError
		if errors.As(err, &refused) {
			if len(refused.Msg) > 200 || strings.ContainsFunc(refused.Msg, func(r rune) bool { return r < 0x20 || r >= 0x7f }) {
				t.Fatalf("refusal %q", refused.Msg)
			}
		}
		// Three acknowledgements at most, each a byte or a message line.
		if consumed := len(replies) - br.Len() - r.Buffered(); consumed > 3*(2+maxSCPLine) {
			t.Fatalf("read %d bytes of the answer", consumed)
		}
	})
}
