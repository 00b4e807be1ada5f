package devsim

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strings"
)

// Telnet protocol bytes (RFC 854, 857, 858, 1073).
const (
	telnetIAC  = 255
	telnetDONT = 254
	telnetDO   = 253
	telnetWONT = 252
	telnetWILL = 251
	telnetSB   = 250
	telnetSE   = 240

	optEcho = 1
	optSGA  = 3
	optNAWS = 31
)

// loginAttempts is how many failed logins a telnet connection gets.
const loginAttempts = 3

// maxSubnegotiation bounds an IAC SB … IAC SE block.
const maxSubnegotiation = 1024

// telnetConn strips telnet commands from what the client sends, answers
// option requests we did not make, and escapes 0xFF in what we send.
type telnetConn struct {
	c        net.Conn
	r        *bufio.Reader
	answered map[[2]byte]bool
}

func newTelnetConn(c net.Conn) *telnetConn {
	return &telnetConn{c: c, r: bufio.NewReaderSize(c, 1024), answered: map[[2]byte]bool{}}
}

func (t *telnetConn) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && (n == 0 || t.r.Buffered() > 0) {
		b, err := t.r.ReadByte()
		if err != nil {
			if n > 0 {
				return n, nil
			}
			return 0, err
		}
		if b != telnetIAC {
			p[n] = b
			n++
			continue
		}
		cmd, err := t.r.ReadByte()
		if err != nil {
			return n, err
		}
		switch cmd {
		case telnetIAC:
			p[n] = telnetIAC
			n++
		case telnetDO, telnetDONT, telnetWILL, telnetWONT:
			opt, err := t.r.ReadByte()
			if err != nil {
				return n, err
			}
			if err := t.answer(cmd, opt); err != nil {
				return n, err
			}
		case telnetSB:
			if err := t.skipSubnegotiation(); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// answer refuses options we did not offer; acknowledgements of our own
// offers need no reply. Each is answered once, so negotiation cannot loop.
func (t *telnetConn) answer(cmd, opt byte) error {
	var reply byte
	switch {
	case cmd == telnetDO && opt != optEcho && opt != optSGA:
		reply = telnetWONT
	case cmd == telnetWILL && opt != optNAWS:
		reply = telnetDONT
	default:
		return nil
	}
	key := [2]byte{cmd, opt}
	if t.answered[key] {
		return nil
	}
	t.answered[key] = true
	_, err := t.c.Write([]byte{telnetIAC, reply, opt})
	return err
}

func (t *telnetConn) skipSubnegotiation() error {
	prevIAC := false
	for i := 0; i < maxSubnegotiation; i++ {
		b, err := t.r.ReadByte()
		if err != nil {
			return err
		}
		if prevIAC && b == telnetSE {
			return nil
		}
		prevIAC = b == telnetIAC && !prevIAC
	}
	return errors.New("devsim: telnet subnegotiation too long")
}

func (t *telnetConn) Write(p []byte) (int, error) {
	if strings.IndexByte(string(p), telnetIAC) < 0 {
		return t.c.Write(p)
	}
	esc := make([]byte, 0, len(p)+8)
	for _, b := range p {
		esc = append(esc, b)
		if b == telnetIAC {
			esc = append(esc, telnetIAC)
		}
	}
	if _, err := t.c.Write(esc); err != nil {
		return 0, err
	}
	return len(p), nil
}

// serveTelnet runs one telnet connection: option negotiation, banner,
// login dialogue, then the shell.
func (d *Device) serveTelnet(ctx context.Context, c net.Conn) {
	if d.has(FailHangBeforeBanner) {
		d.waitClose(c)
		return
	}
	tc := newTelnetConn(c)
	s := d.newSession(ctx, tc, tc, c, func() { d.waitClose(c) })
	if _, err := c.Write([]byte{
		telnetIAC, telnetWILL, optEcho,
		telnetIAC, telnetWILL, optSGA,
		telnetIAC, telnetDO, optNAWS,
	}); err != nil {
		return
	}
	if err := s.text(d.p.Banner); err != nil {
		return
	}
	if ok, err := s.loginDialogue(); !ok || err != nil {
		return
	}
	if err := s.runShell(); errors.Is(err, errQuit) {
		s.text("\n")
	}
}

// loginDialogue asks for the username and password (LoginUserPrompt,
// LoginPasswordPrompt), up to loginAttempts times; ok reports a login
// that went through, with s.user set.
func (s *session) loginDialogue() (ok bool, err error) {
	d := s.d
	userPrompt := d.p.LoginUserPrompt
	if userPrompt == "" {
		userPrompt = "Username: "
	}
	again := userPrompt[strings.LastIndex(userPrompt, "\n")+1:]
	passPrompt := d.p.LoginPasswordPrompt
	if passPrompt == "" {
		passPrompt = "Password: "
	}
	for attempt := 0; attempt < loginAttempts; attempt++ {
		prompt := userPrompt
		if attempt > 0 {
			prompt = again
		}
		if err := s.text(prompt); err != nil {
			return false, err
		}
		user, err := s.readLine(true)
		if err != nil {
			return false, err
		}
		if err := s.text(passPrompt); err != nil {
			return false, err
		}
		pw, err := s.readLine(false)
		if err != nil {
			return false, err
		}
		if d.checkLogin(strings.TrimSpace(user), pw) {
			s.user = d.loginName(user)
			return true, nil
		}
		if err := s.text(d.p.LoginFailed); err != nil {
			return false, err
		}
	}
	return false, nil
}
