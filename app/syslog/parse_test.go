package syslog

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseHeaders(t *testing.T) {
	tests := []struct {
		line string
		want Message
	}{
		{ // RFC 3164 proper, with a tag (sample: MikroTik / Junos shapes)
			"<189>Mar  5 14:47:45 sr_hktGCS001 mgd[91373]: UI_COMMIT: User 'user' requested 'commit' operation (comment: none)",
			Message{Format: FormatRFC3164, Priority: 189, Facility: 23, Severity: 5, Timestamp: "Mar  5 14:47:45",
				Hostname: "sr_hktGCS001", AppName: "mgd", ProcID: "91373",
				Text: "mgd[91373]: UI_COMMIT: User 'user' requested 'commit' operation (comment: none)"},
		},
		{ // Cisco direct: sequence number, "." mark, milliseconds, no hostname
			"<187>343: .Sep 21 09:22:01.678: %LINK-3-UPDOWN: Interface GigabitEthernet1/0/12, changed state to up",
			Message{Format: FormatRFC3164, Priority: 187, Facility: 23, Severity: 3, Timestamp: "Sep 21 09:22:01.678",
				Text: "%LINK-3-UPDOWN: Interface GigabitEthernet1/0/12, changed state to up"},
		},
		{ // Cisco "*" mark and a time zone
			"<189>*Mar 1 18:48:50.483 UTC: %SYS-5-CONFIG_I: Configured from console by vty2 (10.34.195.36)",
			Message{Format: FormatRFC3164, Priority: 189, Facility: 23, Severity: 5, Timestamp: "Mar 1 18:48:50.483 UTC",
				Text: "%SYS-5-CONFIG_I: Configured from console by vty2 (10.34.195.36)"},
		},
		{ // Ruijie: space after PRI, "226:" glued to the month
			"<189> 226:Mar 5 02:09:10 Ruijie %SYS-5-CONFIG_I: Configured from console by console",
			Message{Format: FormatRFC3164, Priority: 189, Facility: 23, Severity: 5, Timestamp: "Mar 5 02:09:10",
				Hostname: "Ruijie", Text: "%SYS-5-CONFIG_I: Configured from console by console"},
		},
		{ // NX-OS: year first, ": " after the PRI
			"<189>: 2014 Jun 29 19:20:57 Nexus-7000 %VSHD-5-VSHD_SYSLOG_CONFIG_I: Configured from vty by admin on console0",
			Message{Format: FormatRFC3164, Priority: 189, Facility: 23, Severity: 5, Timestamp: "2014 Jun 29 19:20:57",
				Hostname: "Nexus-7000", Text: "%VSHD-5-VSHD_SYSLOG_CONFIG_I: Configured from vty by admin on console0"},
		},
		{ // ASA: year after the day, " : " after an IP hostname
			"<165>Apr 15 2017 00:21:14 192.168.12.1 : %ASA-5-111010: User 'john', running 'CLI' from IP 0.0.0.0, executed 'dir disk0:/dap.xml'",
			Message{Format: FormatRFC3164, Priority: 165, Facility: 20, Severity: 5, Timestamp: "Apr 15 2017 00:21:14",
				Hostname: "192.168.12.1", Text: "%ASA-5-111010: User 'john', running 'CLI' from IP 0.0.0.0, executed 'dir disk0:/dap.xml'"},
		},
		{ // ASA without a hostname but with " : "
			"<163>Jan 15 2014 03:28:52 : %PIX-3-710003: ESP access denied by ACL",
			Message{Format: FormatRFC3164, Priority: 163, Facility: 20, Severity: 3, Timestamp: "Jan 15 2014 03:28:52",
				Text: "%PIX-3-710003: ESP access denied by ACL"},
		},
		{ // H3C: milliseconds after a colon, year after the time
			"<189>Jan  1 07:30:19:542 2000 Sysname %%10CFGMAN/5/CFGMAN_CFGCHANGED: -EventIndex=[12]",
			Message{Format: FormatRFC3164, Priority: 189, Facility: 23, Severity: 5, Timestamp: "Jan  1 07:30:19:542 2000",
				Hostname: "Sysname", Text: "%%10CFGMAN/5/CFGMAN_CFGCHANGED: -EventIndex=[12]"},
		},
		{ // ISO timestamp, IPv6 hostname
			"<14>2026-09-23T10:15:32.120+02:00 2001:db8::1 sshd[12]: ok",
			Message{Format: FormatRFC3164, Priority: 14, Facility: 1, Severity: 6, Timestamp: "2026-09-23T10:15:32.120+02:00",
				Hostname: "2001:db8::1", AppName: "sshd", ProcID: "12", Text: "sshd[12]: ok"},
		},
		{ // FortiOS: key=value right after the PRI, no header
			`<189>date=2025-04-10 time=05:03:10 logid="0100044547" logdesc="Object attribute configured"`,
			Message{Format: FormatRaw, Priority: 189, Facility: 23, Severity: 5,
				Text: `date=2025-04-10 time=05:03:10 logid="0100044547" logdesc="Object attribute configured"`},
		},
		{ // PAN-OS: CSV after the hostname
			"<14>Oct 24 15:31:00 PA-220 1,2021/10/24 15:31:00,0128,CONFIG,0",
			Message{Format: FormatRFC3164, Priority: 14, Facility: 1, Severity: 6, Timestamp: "Oct 24 15:31:00",
				Hostname: "PA-220", Text: "1,2021/10/24 15:31:00,0128,CONFIG,0"},
		},
		{ // no PRI, no header at all
			"hello world\r\n",
			Message{Format: FormatRaw, Priority: -1, Facility: -1, Severity: -1, Text: "hello world"},
		},
		{ // a PRI out of range is text
			"<192>Mar  5 14:47:45 host x",
			Message{Format: FormatRaw, Priority: -1, Facility: -1, Severity: -1, Text: "<192>Mar  5 14:47:45 host x"},
		},
		{ // RFC 5424 with structured data and escapes, and a BOM
			"<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut=\"3\" eventSource=\"App\\]lication\"] \ufeffAn application event",
			Message{Format: FormatRFC5424, Priority: 165, Facility: 20, Severity: 5, Timestamp: "2003-10-11T22:14:15.003Z",
				Hostname: "mymachine.example.com", AppName: "evntslog", MsgID: "ID47",
				StructuredData: "[exampleSDID@32473 iut=\"3\" eventSource=\"App\\]lication\"]", Text: "An application event"},
		},
		{ // RFC 5424 with every field nil and no message
			"<13>1 - - - - - -",
			Message{Format: FormatRFC5424, Priority: 13, Facility: 1, Severity: 5},
		},
		{ // RFC 5424 with an SD element that never closes
			"<13>1 2026-01-01T00:00:00Z h a p m [x a=\"b]",
			Message{Format: FormatRFC5424, Priority: 13, Facility: 1, Severity: 5, Timestamp: "2026-01-01T00:00:00Z",
				Hostname: "h", AppName: "a", ProcID: "p", MsgID: "m", StructuredData: "[x a=\"b]"},
		},
	}
	for _, tt := range tests {
		got := Parse([]byte(tt.line))
		if got != tt.want {
			t.Errorf("Parse(%q)\n got  %+v\n want %+v", tt.line, got, tt.want)
		}
	}
}

// FuzzParse: any bytes parse without a panic, into fields that are parts
// of the input, and the matcher never panics on what comes out.
func FuzzParse(f *testing.F) {
	for _, s := range samples {
		f.Add([]byte(s.line))
	}
	for _, seed := range []string{
		"", "<", "<1", "<1>", "<999>x", "<13>1", "<13>1 ", "<13>1 2026-01-01T00:00:00Z", "<13>1 - - - - - [",
		"<13>1 - - - - - [a b=\"\\", "<13>Mar", "<13>Mar 1", "<13>Mar 1 1", "<13>Mar 1 1:00:0", "<13>*.Mar 10 10:10:10.",
		"<13>2026-01-01T00:00:00+0", "<13>1234: ", "<13>12:34:56:789 2000", "<13>Jan  1 07:30:19:542 2000",
		"<13>Jan 1 00:00:00 host :", "<13>Jan 1 00:00:00 a[b:", "\x00\xff<13>\n\n",
	} {
		f.Add([]byte(seed))
	}
	mx, err := NewMatcher(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m := Parse(b)
		in := string(b)
		for _, part := range []string{m.Timestamp, m.Hostname, m.AppName, m.ProcID, m.MsgID, m.StructuredData,
			strings.TrimPrefix(m.Text, "\ufeff")} {
			if !strings.Contains(in, part) {
				t.Fatalf("field %q is not part of the input %q", part, in)
			}
		}
		if len(m.Text) > len(b) {
			t.Fatalf("text longer than the input")
		}
		if m.Priority < -1 || m.Priority > 191 || (m.Priority >= 0 && (m.Facility != m.Priority/8 || m.Severity != m.Priority%8)) {
			t.Fatalf("priority %d facility %d severity %d", m.Priority, m.Facility, m.Severity)
		}
		_, _ = mx.Match(&m)
		_ = utf8.ValidString(m.Text) // invalid UTF-8 is kept as sent, never an error
	})
}
