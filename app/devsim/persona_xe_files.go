package devsim

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// The IOS-XE file commands a restore needs around configure replace
// (persona_xe.go has their sources): copy, dir, verify /md5, delete and
// more on the files put with PutFile, flash: and bootflash: being one
// file system.

// isRunning and isStartup name the configurations in copy commands.
func isRunning(u string) bool {
	return strings.EqualFold(u, "running-config") || strings.EqualFold(u, "system:running-config")
}

func isStartup(u string) bool {
	return strings.EqualFold(u, "startup-config") || strings.EqualFold(u, "nvram:startup-config")
}

func isFlash(u string) bool {
	n := normFilePath(u)
	return strings.HasPrefix(n, "flash:") && len(n) > len("flash:")
}

func baseName(u string) string {
	n := normFilePath(u)
	return n[strings.LastIndexAny(n, ":/")+1:]
}

func (s *session) xeCopy(cmd string, w []string) error {
	args := w[1:]
	for len(args) > 0 && strings.HasPrefix(args[0], "/") {
		args = args[1:]
	}
	if len(args) != 2 {
		if len(args) < 2 {
			return s.plain(xeIncomplete)
		}
		return s.invalidWord(cmd, w, len(w)-1)
	}
	src, dst := args[0], args[1]
	d := s.d
	var data []byte
	switch {
	case isRunning(src):
		data = []byte(d.RunningConfig())
	case isStartup(src):
		data = []byte(d.StartupConfig())
	case isFlash(src):
		var ok bool
		if data, ok = d.File(src); !ok {
			return s.plain(fmt.Sprintf("%%Error opening %s (No such file or directory)\n", src))
		}
	default:
		return s.invalidWord(cmd, w, len(w)-2)
	}
	def := baseName(dst)
	switch {
	case isRunning(dst):
		def = "running-config"
	case isStartup(dst):
		def = "startup-config"
	case !isFlash(dst):
		return s.invalidWord(cmd, w, len(w)-1)
	}
	answer, err := s.ask(fmt.Sprintf("Destination filename [%s]? ", def))
	if err != nil {
		return err
	}
	copied := fmt.Sprintf("%d bytes copied in 0.052 secs (%d bytes/sec)\n", len(data), len(data)*19)
	switch {
	case isRunning(dst):
		return s.plain(d.xeMerge(string(data), s.user) + copied)
	case isStartup(dst):
		d.mu.Lock()
		if isRunning(src) {
			d.saveLocked()
		} else {
			saved := normalizeConfig(d.p.Platform, string(data))
			d.ensureHistoryLocked()
			d.cfg.startup = &saved
			d.rebuildDocsLocked()
		}
		d.mu.Unlock()
		if isRunning(src) {
			return s.plain("Building configuration...\n[OK]\n")
		}
		return s.plain(copied)
	}
	name := dst
	if answer != "" {
		name = "flash:" + answer
	}
	if isRunning(src) || isStartup(src) {
		data = append([]byte("!\n"), data...)
	}
	d.PutFile(name, data)
	return s.plain(copied)
}

// xeMerge applies a file to the running configuration the way copy …
// running-config does: each command as typed, so commands are added, none
// removed. Commands IOS refuses print its error.
func (d *Device) xeMerge(text, user string) string {
	kept, failed := iosFileLines(text, d.opts.RejectLines)
	var out strings.Builder
	for range failed {
		out.WriteString(strings.ReplaceAll(d.p.InvalidInput, "{caret}", "^"))
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	lines := strings.Split(strings.TrimSuffix(d.runningLocked(), "\n"), "\n")
	for _, add := range iosBlocks(iosText(kept, d.opts.DropLines)) {
		head := slices.Index(lines, add.head)
		if head < 0 {
			at := len(lines)
			if i := slices.Index(lines, "end"); i >= 0 {
				at = i
			}
			lines = slices.Insert(lines, at, append([]string{add.head}, add.kids...)...)
			continue
		}
		end := head + 1
		for end < len(lines) && strings.HasPrefix(lines[end], " ") {
			end++
		}
		for _, k := range add.kids {
			if !slices.Contains(lines[head+1:end], k) {
				lines = slices.Insert(lines, end, k)
				end++
			}
		}
	}
	d.setRunningLocked(strings.Join(lines, "\n")+"\n", CommitMerge, user)
	return out.String()
}

func (s *session) xeDir(w []string) error {
	target := "flash:"
	if len(w) == 2 {
		target = w[1]
	}
	n := normFilePath(target)
	if !strings.HasPrefix(n, "flash:") {
		return s.plain(fmt.Sprintf("%%Error opening %s (No such device)\n", target))
	}
	d := s.d
	names := d.Files()
	var rows strings.Builder
	used := 0
	for i, name := range names {
		if !strings.HasPrefix(name, "flash:") || n != "flash:" && name != n {
			continue
		}
		data, _ := d.File(name)
		used += len(data)
		fmt.Fprintf(&rows, "%5d  -rw-  %11d  %s  %s\n", 21+i, len(data), d.opts.Clock().UTC().Format("Jan 2 2006 15:04:05 -07:00"), baseName(name))
	}
	if n != "flash:" && rows.Len() == 0 {
		return s.plain(fmt.Sprintf("%%Error opening %s (No such file or directory)\n", target))
	}
	shown := "flash:/" + strings.TrimPrefix(n, "flash:")
	return s.plain(fmt.Sprintf("Directory of %s\n\n%s\n%d bytes total (%d bytes free)\n", shown, rows.String(), int64(xeFlashTotal), int64(xeFlashTotal)-int64(used)))
}

func (s *session) xeVerify(name string) error {
	data, ok := s.d.File(name)
	if !ok || !isFlash(name) {
		return s.plain(fmt.Sprintf("%%Error opening %s (No such file or directory)\n", name))
	}
	sum := md5.Sum(data)
	dots := strings.Repeat(".", min(60, 1+len(data)/4096))
	return s.plain(fmt.Sprintf("%sDone!\nverify /md5 (%s) = %s\n", dots, name, hex.EncodeToString(sum[:])))
}

func (s *session) xeDelete(cmd string, w []string) error {
	force := false
	args := w[1:]
	for len(args) > 0 && strings.HasPrefix(args[0], "/") {
		force = force || strings.EqualFold(args[0], "/force")
		args = args[1:]
	}
	if len(args) != 1 {
		if len(args) == 0 {
			return s.plain(xeIncomplete)
		}
		return s.invalidWord(cmd, w, len(w)-1)
	}
	name := args[0]
	d := s.d
	if _, ok := d.File(name); !ok || !isFlash(name) {
		return s.plain(fmt.Sprintf("%%Error deleting %s (No such file or directory)\n", name))
	}
	if !force {
		answer, err := s.ask(fmt.Sprintf("Delete filename [%s]? ", baseName(name)))
		if err != nil {
			return err
		}
		if answer != "" && answer != baseName(name) {
			return nil
		}
		confirm, err := s.ask(fmt.Sprintf("Delete %s? [confirm]", "flash:/"+baseName(name)))
		if err != nil {
			return err
		}
		if confirm != "" && !strings.EqualFold(confirm, "y") && !strings.EqualFold(confirm, "yes") {
			return nil
		}
	}
	d.mu.Lock()
	delete(d.cfg.files, normFilePath(name))
	d.mu.Unlock()
	return nil
}

func (s *session) xeMore(name string) error {
	data, ok := s.xeFile(name)
	if !ok {
		return s.plain(fmt.Sprintf("%%Error opening %s (No such file or directory)\n", name))
	}
	return s.output(string(data), false)
}
