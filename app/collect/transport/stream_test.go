package transport

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

type writeResult struct {
	n   int
	err error
}

// TestStreamBackpressure: a writer waits while the buffer is full, resumes
// as the reader drains it, and is released by close.
func TestStreamBackpressure(t *testing.T) {
	s := newStream(4)
	res := make(chan writeResult, 1)
	go func() {
		n, err := s.Write([]byte("0123456789"))
		res <- writeResult{n, err}
	}()
	s.SetReadDeadline(time.Now().Add(hangGuard))
	got := make([]byte, 0, 10)
	buf := make([]byte, 3)
	for len(got) < 10 {
		n, err := s.Read(buf)
		if n > 4 {
			t.Fatalf("read %d bytes from a 4-byte stream", n)
		}
		got = append(got, buf[:n]...)
		if err != nil {
			t.Fatal(err)
		}
	}
	if r := <-res; string(got) != "0123456789" || r.n != 10 || r.err != nil {
		t.Fatalf("got %q, write = %d, %v", got, r.n, r.err)
	}

	go func() {
		n, err := s.Write([]byte("0123456789"))
		res <- writeResult{n, err}
	}()
	// Wait until the writer has filled the buffer and must be blocked.
	for deadline := time.Now().Add(hangGuard); ; {
		s.mu.Lock()
		full := s.buf.Len() == 4
		s.mu.Unlock()
		if full {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("writer never filled the buffer")
		}
		time.Sleep(time.Millisecond)
	}
	s.close()
	select {
	case r := <-res:
		if r.n != 4 || !errors.Is(r.err, net.ErrClosed) {
			t.Fatalf("blocked write after close = %d, %v", r.n, r.err)
		}
	case <-time.After(hangGuard):
		t.Fatal("close did not release a blocked writer")
	}
}

func TestStreamFinish(t *testing.T) {
	s := newStream(16)
	s.Write([]byte("tail"))
	s.finish(nil)
	s.SetReadDeadline(time.Now().Add(hangGuard))
	got, err := io.ReadAll(s)
	if string(got) != "tail" || err != nil {
		t.Fatalf("ReadAll = %q, %v; want buffered data then EOF", got, err)
	}
}

// TestStreamDeadlineWakesReader: moving the deadline earlier wakes a Read
// that is already waiting.
func TestStreamDeadlineWakesReader(t *testing.T) {
	s := newStream(16)
	s.SetReadDeadline(time.Now().Add(time.Hour))
	res := make(chan error, 1)
	go func() {
		_, err := s.Read(make([]byte, 4))
		res <- err
	}()
	s.SetReadDeadline(time.Now())
	select {
	case err := <-res:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("err = %v", err)
		}
	case <-time.After(hangGuard):
		t.Fatal("Read kept waiting after the deadline was moved")
	}
}
