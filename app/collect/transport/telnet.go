package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Telnet protocol bytes (RFC 854) and the options we take part in.
const (
	tnIAC  = 255
	tnDONT = 254
	tnDO   = 253
	tnWONT = 252
	tnWILL = 251
	tnSB   = 250
	tnSE   = 240

	optEcho = 1
	optSGA  = 3
	optNAWS = 31
)

// telnetWriteTimeout bounds each write, including negotiation answers, so
// a device that stops reading cannot hold a worker.
const telnetWriteTimeout = 30 * time.Second

// telnetLoginMax caps how much output TelnetLogin reads while waiting for
// one step of the login dialogue (banners can be long, not endless).
const telnetLoginMax = 64 << 10

// DialTelnet opens a TCP connection bounded by ctx and ConnectTimeout and
// returns a stream that answers option negotiation itself: it accepts the
// server's ECHO and SGA, agrees to NAWS (announcing TermWidth×TermHeight),
// refuses everything else, strips all IAC sequences from what the caller
// reads and escapes 0xFF in what the caller writes. Username and Password
// are not used here: call TelnetLogin next.
func DialTelnet(ctx context.Context, o Options) (Conn, error) {
	o, err := o.withDefaults(23)
	if err != nil {
		return nil, err
	}
	nc, err := dialTCP(ctx, "telnet", o)
	if err != nil {
		return nil, err
	}
	return newTelnetConn(nc, o.TermWidth, o.TermHeight), nil
}

// telnetConn decodes the telnet byte stream in Read. Reads are serialised
// because the decoder state spans reads; writes (the caller's and the
// negotiation answers) are serialised separately.
type telnetConn struct {
	nc            net.Conn
	width, height int

	rmu     sync.Mutex
	pending []byte // pushed back by TelnetLogin, served before the socket
	scratch []byte
	state   int
	cmd     byte
	afterCR bool
	remote  [256]bool // options the server performs with our consent
	local   [256]bool // options we perform

	wmu sync.Mutex
}

var _ Conn = (*telnetConn)(nil)

const (
	stData = iota
	stIAC
	stOption // after IAC WILL/WONT/DO/DONT
	stSB     // inside a subnegotiation
	stSBIAC  // IAC inside a subnegotiation
)

func newTelnetConn(nc net.Conn, width, height int) *telnetConn {
	return &telnetConn{nc: nc, width: width, height: height, scratch: make([]byte, 32<<10)}
}

func (c *telnetConn) SetReadDeadline(t time.Time) error { return c.nc.SetReadDeadline(t) }
func (c *telnetConn) Close() error                      { return c.nc.Close() }

// Write sends p with 0xFF doubled, as the protocol requires.
func (c *telnetConn) Write(p []byte) (int, error) {
	if err := c.writeRaw(bytes.ReplaceAll(p, []byte{tnIAC}, []byte{tnIAC, tnIAC})); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (c *telnetConn) writeRaw(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.nc.SetWriteDeadline(time.Now().Add(telnetWriteTimeout))
	_, err := c.nc.Write(b)
	return err
}

// unread puts b back in front of the stream.
func (c *telnetConn) Unread(b []byte) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	c.pending = append(bytes.Clone(b), c.pending...)
}

// Read returns data bytes only; negotiation is answered on the way. A read
// that yields only protocol bytes does not return 0: it reads again (under
// the same socket deadline).
func (c *telnetConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	for {
		// Decoded output never exceeds its input, so it fits in p.
		raw := c.scratch[:min(len(p), len(c.scratch))]
		n, err := c.nc.Read(raw)
		out, replies := c.decode(raw[:n], p)
		if len(replies) > 0 {
			if werr := c.writeRaw(replies); werr != nil && err == nil {
				err = werr
			}
		}
		if out > 0 || err != nil {
			return out, err
		}
	}
}

// decode strips protocol sequences from in into out and returns the number
// of data bytes and the negotiation answers to send.
func (c *telnetConn) decode(in, out []byte) (int, []byte) {
	n := 0
	var replies []byte
	for _, b := range in {
		switch c.state {
		case stData:
			switch {
			case b == tnIAC:
				c.state = stIAC
			case b == 0 && c.afterCR: // NVT "CR NUL" is a bare CR
				c.afterCR = false
			default:
				out[n] = b
				n++
				c.afterCR = b == '\r'
			}
		case stIAC:
			switch b {
			case tnIAC: // escaped literal 0xFF
				out[n] = tnIAC
				n++
				c.afterCR = false
				c.state = stData
			case tnWILL, tnWONT, tnDO, tnDONT:
				c.cmd = b
				c.state = stOption
			case tnSB:
				c.state = stSB
			default: // NOP, GA, DM, AYT, stray SE …: nothing to do
				c.state = stData
			}
		case stOption:
			replies = append(replies, c.negotiate(c.cmd, b)...)
			c.state = stData
		case stSB:
			if b == tnIAC {
				c.state = stSBIAC
			}
		case stSBIAC:
			switch b {
			case tnSE:
				c.state = stData
			default: // IAC IAC inside the subnegotiation, or a broken one
				c.state = stSB
			}
		}
	}
	return n, replies
}

// negotiate answers one request; answers are only sent when an option
// changes state, so two peers cannot loop (RFC 854 §"option negotiation").
func (c *telnetConn) negotiate(cmd, opt byte) []byte {
	switch cmd {
	case tnWILL:
		if opt != optEcho && opt != optSGA {
			return []byte{tnIAC, tnDONT, opt}
		}
		if c.remote[opt] {
			return nil
		}
		c.remote[opt] = true
		return []byte{tnIAC, tnDO, opt}
	case tnWONT:
		if !c.remote[opt] {
			return nil
		}
		c.remote[opt] = false
		return []byte{tnIAC, tnDONT, opt}
	case tnDO:
		if opt != optNAWS && opt != optSGA {
			return []byte{tnIAC, tnWONT, opt}
		}
		if c.local[opt] {
			return nil
		}
		c.local[opt] = true
		reply := []byte{tnIAC, tnWILL, opt}
		if opt == optNAWS {
			reply = append(reply, c.windowSize()...)
		}
		return reply
	case tnDONT:
		if !c.local[opt] {
			return nil
		}
		c.local[opt] = false
		return []byte{tnIAC, tnWONT, opt}
	}
	return nil
}

// windowSize is the NAWS subnegotiation (RFC 1073), 0xFF doubled.
func (c *telnetConn) windowSize() []byte {
	b := []byte{tnIAC, tnSB, optNAWS}
	for _, v := range []int{min(c.width, 0xFFFF), min(c.height, 0xFFFF)} {
		for _, x := range []byte{byte(v >> 8), byte(v)} {
			b = append(b, x)
			if x == tnIAC {
				b = append(b, tnIAC)
			}
		}
	}
	return append(b, tnIAC, tnSE)
}

var (
	// userPromptRE and passwordPromptRE match a prompt at the very end of
	// the output read so far.
	// "Login Name:" is ProCurve's, "login as:" some embedded servers'; a
	// bare "User:" on a line of its own is AireOS's, ArubaOS's, Dell
	// N-series' and the FASTPATH switches' (Netgear ProSAFE, Broadcom EFOS,
	// Ubiquiti EdgeSwitch).
	userPromptRE     = regexp.MustCompile(`(?i)(?:user ?name|login(?: name| as)?|(?:^|\n)[ \t]*user)[ \t]*:[ \t]*$`)
	passwordPromptRE = regexp.MustCompile(`(?i)password[ \t]*:[ \t]*$`)
	// loginFailedRE matches what devices print after a rejected login.
	loginFailedRE = regexp.MustCompile(`(?i)login invalid|authentication failed|login incorrect|login failed|` +
		`access denied|bad password|invalid password|incorrect password|permission denied|` +
		`invalid (?:user ?name|login)`)
	// shellPromptRE is a line ending like a CLI prompt: the login went
	// through. The driver does the exact prompt detection afterwards. "%"
	// is left out: Cisco's "% Login invalid" starts with it.
	shellPromptRE = regexp.MustCompile(`[>#$\]][ \t]*$`)
	// pressKeyRE is a device that wants a key press between the login and
	// its first prompt (ProCurve); the login went through and the driver
	// answers it.
	pressKeyRE = regexp.MustCompile(`(?i)press any key to continue[ \t]*$`)
)

// isUserPrompt reports a username prompt at the end of b, not counting
// "Last login:" lines that a read happened to end after.
func isUserPrompt(b []byte) bool {
	if !userPromptRE.Match(b) {
		return false
	}
	line := b[bytes.LastIndexAny(b, "\r\n")+1:]
	return !strings.HasPrefix(strings.ToLower(strings.TrimSpace(string(line))), "last login")
}

// TelnetLogin walks the login dialogue on a telnet stream: it waits for a
// username prompt ("login:", "username:", "user name:", "login name:", "User:") —
// or a password prompt directly, for line-password devices — then
// "password:", then for either a CLI prompt or "press any key to continue"
// (success) or a failure message or a repeated prompt (ErrAuth). Timeouts wrap ErrConnect. It is bounded by ctx, and by
// DefaultLoginTimeout when ctx has no deadline. On a stream from DialTelnet
// the output that followed the password (banner, prompt) is left to be read
// again, so the driver can detect the prompt from it.
func TelnetLogin(ctx context.Context, conn Conn, username, password string) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultLoginTimeout)
		defer cancel()
	}
	who := "telnet login"
	if tc, ok := conn.(*telnetConn); ok {
		who = "telnet " + tc.nc.RemoteAddr().String() + ": login"
	}
	fail := func(class error, stage string, err error) error {
		return fmt.Errorf("transport: %s: %s: %w: %w", who, stage, class, err)
	}
	classify := func(stage string, err error) error {
		if isTimeout(err) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
			return fail(ErrConnect, stage, err)
		}
		return fmt.Errorf("transport: %s: %s: %w", who, stage, err)
	}

	const stage1 = "waiting for the login prompt"
	got, err := readUntil(ctx, conn, telnetLoginMax, func(b []byte) bool {
		return isUserPrompt(b) || passwordPromptRE.Match(b)
	})
	if err != nil {
		return classify(stage1, err)
	}
	if !passwordPromptRE.Match(got) {
		if _, err := conn.Write([]byte(username + "\r\n")); err != nil {
			return classify("sending the username", err)
		}
		const stage2 = "waiting for the password prompt"
		got, err = readUntil(ctx, conn, telnetLoginMax, func(b []byte) bool {
			return passwordPromptRE.Match(b) || isUserPrompt(b) || loginFailedRE.Match(b)
		})
		if err != nil {
			return classify(stage2, err)
		}
		if !passwordPromptRE.Match(got) {
			return fail(ErrAuth, stage2, errors.New("device rejected the username"))
		}
	}
	if _, err := conn.Write([]byte(password + "\r\n")); err != nil {
		return classify("sending the password", err)
	}

	const stage3 = "waiting for the login result"
	got, err = readUntil(ctx, conn, telnetLoginMax, func(b []byte) bool {
		return loginFailedRE.Match(b) || isUserPrompt(b) || passwordPromptRE.Match(b) ||
			shellPromptRE.Match(b) || pressKeyRE.Match(b)
	})
	switch {
	case err != nil && (errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed)):
		// Devices hang up after a rejected login; retrying would risk a
		// lock-out, so this counts as an authentication failure.
		return fail(ErrAuth, stage3, errors.New("device closed the connection after the password"))
	case err != nil:
		return classify(stage3, err)
	case loginFailedRE.Match(got):
		return fail(ErrAuth, stage3, fmt.Errorf("device said %q", firstLine(loginFailedRE.Find(got))))
	case isUserPrompt(got) || passwordPromptRE.Match(got):
		return fail(ErrAuth, stage3, errors.New("device asked for the credentials again"))
	}
	if u, ok := conn.(interface{ Unread([]byte) }); ok {
		u.Unread(got)
	}
	return nil
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(s)
}
