// Command overlay writes the build overlay release builds compile with
// (go build -overlay DIR/overlay.json): the installed Go's
// text/template/exec.go with its method lookup by run-time name replaced
// by lookups of the names in internal/tmplnames/names.txt, which keeps the
// linker's dead-code elimination of methods working (see package
// tmplnames). `make build` and `make dist` run it.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"backupd/internal/tmplnames"
)

func main() {
	dir := flag.String("o", "bin/.template-overlay", "directory to write overlay.json and exec.go into")
	flag.Parse()
	if err := write(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "overlay:", err)
		os.Exit(1)
	}
}

func write(dir string) error {
	// The go command that builds the release is the one on PATH, the same
	// that runs this command.
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return fmt.Errorf("go env GOROOT: %w", err)
	}
	orig := filepath.Join(strings.TrimSpace(string(out)), "src", "text", "template", "exec.go")
	src, err := os.ReadFile(orig)
	if err != nil {
		return err
	}
	patched, err := tmplnames.Overlay(src, tmplnames.Names())
	if err != nil {
		return err
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	file := filepath.Join(dir, "exec.go")
	if err := os.WriteFile(file, patched, 0o644); err != nil {
		return err
	}
	js, err := json.Marshal(map[string]any{"Replace": map[string]string{orig: file}})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "overlay.json"), append(js, '\n'), 0o644)
}
