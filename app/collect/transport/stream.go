package transport

import (
	"bytes"
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// stream is a bounded in-memory pipe between the goroutines that drain an
// SSH channel and the caller's Read, which honours a read deadline. Writers
// block while limit bytes are unread, so a caller that stops reading pushes
// back on the device through the SSH window instead of growing memory.
type stream struct {
	mu       sync.Mutex
	buf      bytes.Buffer
	limit    int
	err      error // why the producer stopped (io.EOF when the device closed)
	closed   bool  // Close was called: reads and writes fail
	deadline time.Time
	changed  chan struct{} // closed and replaced on every state change
}

func newStream(limit int) *stream {
	return &stream{limit: limit, changed: make(chan struct{})}
}

func (s *stream) signalLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Write appends p, waiting for room while the buffer is full.
func (s *stream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	written := 0
	for len(p) > 0 {
		if s.closed {
			return written, net.ErrClosed
		}
		room := s.limit - s.buf.Len()
		if room <= 0 {
			ch := s.changed
			s.mu.Unlock()
			<-ch
			s.mu.Lock()
			continue
		}
		n := min(room, len(p))
		s.buf.Write(p[:n])
		p = p[n:]
		written += n
		s.signalLocked()
	}
	return written, nil
}

// finish records that no more data will come; buffered data stays readable.
func (s *stream) finish(err error) {
	if err == nil {
		err = io.EOF
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
		s.signalLocked()
	}
}

// close fails pending and future reads and writes.
func (s *stream) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		s.signalLocked()
	}
}

func (s *stream) SetReadDeadline(t time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deadline = t
	s.signalLocked()
	return nil
}

func (s *stream) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	s.mu.Lock()
	for {
		switch {
		case s.closed:
			s.mu.Unlock()
			return 0, net.ErrClosed
		case s.buf.Len() > 0:
			n, _ := s.buf.Read(p)
			s.signalLocked()
			s.mu.Unlock()
			return n, nil
		case s.err != nil:
			err := s.err
			s.mu.Unlock()
			return 0, err
		}
		dl := s.deadline
		if !dl.IsZero() && !time.Now().Before(dl) {
			s.mu.Unlock()
			return 0, os.ErrDeadlineExceeded
		}
		ch := s.changed
		s.mu.Unlock()

		var expired <-chan time.Time
		if !dl.IsZero() {
			if timer == nil {
				timer = time.NewTimer(time.Until(dl))
			} else {
				timer.Reset(time.Until(dl))
			}
			expired = timer.C
		}
		select {
		case <-ch:
		case <-expired:
		}
		s.mu.Lock()
	}
}
