package gitmirror

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// The mirror starts git with os.StartProcess rather than os/exec: it is
// all the mirror needs, and os/exec would cost the binary ~40 KB it does
// not have to spare.

// lookPath finds an executable named name in PATH.
func lookPath(name string) (string, error) {
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found in PATH", name)
}

// runProcess runs bin with args and env, stdin fed from stdin (nil: the
// null device), stdout and stderr copied to the writers. When ctx ends
// the process is killed; its output pipes are given up 5 s later, should
// a child it started (ssh) hold them open.
func runProcess(ctx context.Context, bin string, args, env []string, stdin io.Reader, stdout, stderr io.Writer) error {
	null, err := os.Open(os.DevNull)
	if err != nil {
		return err
	}
	defer null.Close()
	var closers []*os.File
	closeAll := func() {
		for _, f := range closers {
			f.Close()
		}
	}
	files := []*os.File{null, nil, nil}
	var inW *os.File
	if stdin != nil {
		inR, w, err := os.Pipe()
		if err != nil {
			return err
		}
		files[0], inW = inR, w
		closers = append(closers, inR)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll()
		return err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		closeAll()
		return err
	}
	files[1], files[2] = outW, errW
	proc, err := os.StartProcess(bin, append([]string{bin}, args...), &os.ProcAttr{Env: env, Files: files, Sys: sysProcAttr()})
	// The child has its ends now.
	outW.Close()
	errW.Close()
	closeAll()
	if err != nil {
		outR.Close()
		errR.Close()
		if inW != nil {
			inW.Close()
		}
		return err
	}
	var wg sync.WaitGroup
	copyOut := func(w io.Writer, r *os.File) {
		defer wg.Done()
		_, _ = io.Copy(w, r)
	}
	wg.Add(2)
	go copyOut(stdout, outR)
	go copyOut(stderr, errR)
	if inW != nil {
		go func() {
			_, _ = io.Copy(inW, stdin)
			inW.Close()
		}()
	}
	waited := make(chan error, 1)
	go func() {
		st, err := proc.Wait()
		if err == nil && !st.Success() {
			err = errors.New(st.String())
		}
		waited <- err
	}()
	var werr error
	select {
	case werr = <-waited:
	case <-ctx.Done():
		killTree(proc)
		werr = <-waited
		if werr == nil {
			werr = ctx.Err()
		}
	}
	copied := make(chan struct{})
	go func() { wg.Wait(); close(copied) }()
	select {
	case <-copied:
	case <-time.After(5 * time.Second):
		killTree(proc)
		outR.Close()
		errR.Close()
		<-copied
	}
	outR.Close()
	errR.Close()
	if inW != nil {
		inW.Close()
	}
	return werr
}
