package driver

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// recording is a session recorded on a real device (testdata/recordings).
type recording struct {
	initPrompt string
	steps      []step // in the order they were recorded
}

type step struct{ sent, reply string }

// unescapeRuby decodes the Ruby-style escapes the recordings use inside
// YAML block scalars.
func unescapeRuby(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'r':
			b.WriteByte('\r')
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'b':
			b.WriteByte('\b')
		case 'e':
			b.WriteByte(0x1b)
		case 'x':
			if i+2 < len(s) {
				if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
					b.WriteByte(byte(v))
					i += 2
					continue
				}
			}
			b.WriteString(`\x`)
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func loadRecording(t *testing.T, name string) recording {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "recordings", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var rec recording
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, val := root.Content[i].Value, root.Content[i+1]
		switch key {
		case "init_prompt":
			rec.initPrompt = unescapeRuby(val.Value)
		case "commands":
			pairs := func(m *yaml.Node) {
				for j := 0; j+1 < len(m.Content); j += 2 {
					rec.steps = append(rec.steps, step{m.Content[j].Value, unescapeRuby(m.Content[j+1].Value)})
				}
			}
			if val.Kind == yaml.SequenceNode {
				for _, item := range val.Content {
					pairs(item)
				}
			} else {
				pairs(val)
			}
		}
	}
	return rec
}

// replay plays a recording as a device over conn: the banner and first
// prompt, then for each line (or pager key) received, the recorded reply.
func (rec recording) replay(conn net.Conn) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	if _, err := conn.Write([]byte(rec.initPrompt)); err != nil {
		return
	}
	next := 0
	var line []byte
	for next < len(rec.steps) {
		c, err := r.ReadByte()
		if err != nil {
			return
		}
		line = append(line, c)
		want := rec.steps[next].sent
		if c != '\n' && string(line) != want {
			continue
		}
		reply := "% Invalid input detected\r\n"
		if string(line) == want {
			reply = rec.steps[next].reply
			next++
		}
		line = nil
		if _, err := conn.Write([]byte(reply)); err != nil {
			return
		}
	}
}

// expected is what a session should return for the step at i (and the
// pager continuations after it): the reply cleaned, without the echo, the
// pager prompt or the final prompt.
func (rec recording) expected(i int) (string, int) {
	text := rec.steps[i].reply
	j := i + 1
	for ; j < len(rec.steps) && rec.steps[j].sent == " "; j++ {
		lines := CleanLines([]byte(text))
		text = strings.Join(lines[:len(lines)-1], "\n") + "\n" + rec.steps[j].reply
	}
	lines := CleanLines([]byte(text))
	lines = lines[1 : len(lines)-1]
	return strings.Join(lines, "\n"), j
}

// TestReplayRealDevices drives the session against four recorded
// interactive sessions of real devices over loopback TCP, and checks every
// command's output: complete (up to the real prompt, across pagers), with
// no echo, prompt, escape or carriage return left.
func TestReplayRealDevices(t *testing.T) {
	for _, c := range []struct {
		name     string
		d        Dialogue
		wantLine string // a line the configuration must hold
	}{
		{"ios_asr920_16.8.1b", Dialogue{Prompt: regexp.MustCompile(`^[\w.:/-]+[>#]$`)}, "hostname hostname"},
		{"nxos_N5548_7.3.13", Dialogue{Prompt: regexp.MustCompile(`^[\w.:/-]+(\([\w-]+\))?[>#]$`)}, "feature lacp"},
		{"aoscx_6100-48G_PL.10.10.1090", Dialogue{Prompt: regexp.MustCompile(`^[\w.:/-]+(\([\w-]+\))?[>#]$`)}, "hostname TEST-SW1235"},
		{"fortigate_FortiGate-501E_vdomHAdown", Dialogue{
			Prompt: regexp.MustCompile(`^[\w.:/-]+( \([\w-]+\))? [#$]$`),
			Pager:  regexp.MustCompile(`--More--\s*$`),
		}, "config system global"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := loadRecording(t, c.name)
			client, server := tcpPair(t)
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { defer wg.Done(); rec.replay(server) }()
			defer func() { client.Close(); wg.Wait() }()

			s := NewSession(client, c.d, 4<<20)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := s.Start(ctx, ""); err != nil {
				t.Fatalf("start: %v", err)
			}
			var all strings.Builder
			for i := 0; i < len(rec.steps); {
				cmd := strings.TrimSuffix(rec.steps[i].sent, "\n")
				if cmd == "exit" {
					break
				}
				want, next := rec.expected(i)
				got, err := s.Run(ctx, cmd)
				if err != nil {
					t.Fatalf("%s: %v", cmd, err)
				}
				if got != want {
					t.Errorf("%s: output differs from the recording\ngot:\n%s\nwant:\n%s", cmd, got, want)
				}
				if strings.ContainsAny(got, "\r\x1b\b") || strings.Contains(got, s.Prompt()) || strings.Contains(got, "--More--") {
					t.Errorf("%s: output keeps terminal debris or the prompt %q", cmd, s.Prompt())
				}
				fmt.Fprintln(&all, got)
				i = next
			}
			if !strings.Contains(all.String(), "\n"+c.wantLine+"\n") {
				t.Errorf("configuration lacks %q", c.wantLine)
			}
		})
	}
}
