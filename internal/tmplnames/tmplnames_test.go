package tmplnames

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"text/template"
)

func TestNamesListed(t *testing.T) {
	names := Names()
	if len(names) < 100 {
		t.Fatalf("names.txt has %d names", len(names))
	}
	if err := Check(names); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]string{{"B", "A"}, {"A", "A"}, {"A", "x-y"}, {`"); panic("`}} {
		if Check(bad) == nil {
			t.Errorf("Check(%q) accepted them", bad)
		}
	}
	for _, n := range FieldOnly {
		if _, err := Overlay([]byte(lookup), []string{n}); err == nil {
			t.Errorf("Overlay accepted the field-only name %s", n)
		}
	}
}

// The field-only names are not looked up as methods in release builds:
// no type of ours may declare a method of that name.
func TestNoFieldOnlyMethods(t *testing.T) {
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || path == filepath.Join(root, "bin") || path == filepath.Join(root, "dist")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv != nil && slices.Contains(FieldOnly, fn.Name.Name) {
				t.Errorf("%s declares the method %s, which release builds do not look up from templates (internal/tmplnames)", path, fn.Name.Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d Go files of the module", files)
	}
}

func TestUsed(t *testing.T) {
	tmpl := template.Must(template.New("t").Parse(
		`{{.A.B}}{{with $x := .C}}{{$x.D}}{{end}}{{(index .E 1).F}}{{if .G}}{{range .H}}{{.I "j" .K}}{{end}}{{else}}{{.L}}{{end}}{{define "m"}}{{.N}}{{end}}{{template "m" .O}}{{len .P | printf "%d"}}`))
	var used []string
	for _, tt := range tmpl.Templates() {
		used = append(used, Used(tt.Tree)...)
	}
	got := strings.Join(used, " ")
	for _, want := range strings.Fields("A B C D E F G H I K L N O P") {
		if !strings.Contains(" "+got+" ", " "+want+" ") {
			t.Errorf("Used missed %s: %s", want, got)
		}
	}
}

func TestOverlayRefusesAnotherExecGo(t *testing.T) {
	for _, src := range []string{"package template\n", "package template\n" + lookup + lookup} {
		if _, err := Overlay([]byte(src), Names()); err == nil {
			t.Errorf("Overlay accepted %q", src)
		}
	}
}

// The overlay, built for real: a program whose template calls a listed
// method gets the same output as with the standard text/template, one
// calling a method not listed no longer finds it, and the linker no
// longer sees a method lookup by run-time name (<ReflectMethod>), which is
// what lets it drop the unused methods.
func TestOverlayBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs")
	}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	orig := filepath.Join(strings.TrimSpace(string(goroot)), "src", "text", "template", "exec.go")
	src, err := os.ReadFile(orig)
	if err != nil {
		t.Fatal(err)
	}
	patched, err := Overlay(src, []string{"Listed"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "overlay"), 0o755); err != nil {
		t.Fatal(err)
	}
	write("overlay/exec.go", string(patched))
	write("overlay/overlay.json", `{"Replace":{"`+orig+`":"`+filepath.Join(dir, "overlay", "exec.go")+`"}}`)
	write("go.mod", "module probe\n\ngo 1.26\n")
	write("main.go", `package main

import (
	"html/template"
	"os"
)

type data struct{ Field string }

func (data) Listed(s string) string { return "listed " + s }
func (data) Unlisted() string       { return "unlisted" }

func main() {
	t := template.Must(template.New("p").Parse(os.Args[1]))
	if err := t.Execute(os.Stdout, data{Field: "<field>"}); err != nil {
		os.Stdout.WriteString("error: " + err.Error())
	}
}
`)
	build := func(overlay bool) string {
		t.Helper()
		bin := filepath.Join(dir, "plain")
		args := []string{"build", "-o", bin, "-ldflags=-dumpdep"}
		if overlay {
			bin = filepath.Join(dir, "overlaid")
			args = []string{"build", "-overlay", filepath.Join(dir, "overlay", "overlay.json"), "-o", bin, "-ldflags=-dumpdep"}
		}
		args = append(args, ".")
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=mod")
		deps, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%.2000s", strings.Join(args, " "), err, deps)
		}
		reflectMethod := strings.Contains(string(deps), "<ReflectMethod>")
		if reflectMethod == overlay {
			t.Errorf("overlay %v: the linker saw a method lookup by run-time name: %v", overlay, reflectMethod)
		}
		return bin
	}
	run := func(bin, tmpl string) string {
		t.Helper()
		out, err := exec.Command(bin, tmpl).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %q: %v\n%s", bin, tmpl, err, out)
		}
		return string(out)
	}
	plain, overlaid := build(false), build(true)
	for _, tmpl := range []string{`{{.Field}} {{.Listed "x"}}`, `{{.Listed .Field}}`} {
		want, got := run(plain, tmpl), run(overlaid, tmpl)
		if got != want || strings.HasPrefix(got, "error") {
			t.Errorf("%q: overlaid build printed %q, standard %q", tmpl, got, want)
		}
	}
	if got := run(plain, `{{.Unlisted}}`); got != "unlisted" {
		t.Errorf("standard build: %q", got)
	}
	if got := run(overlaid, `{{.Unlisted}}`); !strings.Contains(got, "can't evaluate field Unlisted") {
		t.Errorf("overlaid build found a method not listed: %q", got)
	}
}
