package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/harmonium-rbm/harmonium/kernel"
)

// newKernelExecutor makes the executor behind `harmonium kernel`. It is set
// by the file that adapts the lang session to kernel.Executor; while no such
// file is part of the build, `harmonium kernel` reports that and exits.
var newKernelExecutor func() kernel.Executor

func kernelCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("harmonium kernel", flag.ContinueOnError)
	fs.SetOutput(stderr)
	connFile := fs.String("f", "", "the connection `file` written by Jupyter")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *connFile == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: harmonium kernel -f CONNECTION_FILE")
		return 2
	}
	if newKernelExecutor == nil {
		fmt.Fprintln(stderr, "harmonium kernel: this build has no Go executor (lang is not linked in)")
		return 1
	}
	return serveKernel(*connFile, newKernelExecutor, stderr)
}

// serveKernel runs a kernel on the connection file until it is shut down.
// The executor is created in the background so that the kernel answers
// kernel_info_request while the interpreter is still loading.
func serveKernel(connFile string, newExec func() kernel.Executor, stderr io.Writer) int {
	logger := log.New(stderr, "harmonium kernel: ", log.LstdFlags)
	conn, err := kernel.ReadConnectionFile(connFile)
	if err != nil {
		fmt.Fprintf(stderr, "harmonium kernel: %v\n", err)
		return 1
	}
	hist, err := openHistory()
	if err != nil {
		logger.Printf("history will not be saved: %v", err)
		hist = nil
	}
	k, err := kernel.New(kernel.Config{
		Conn:                  conn,
		Executor:              startExecutor(newExec),
		History:               hist,
		Log:                   logger,
		ImplementationVersion: version,
		Banner:                "Harmonium " + version + ": Go notebooks (yaegi) with the rbmcore RBM library preloaded.\nType %help for magics and preloaded packages.",
		HelpLinks: []kernel.HelpLink{
			{Text: "Go documentation", URL: "https://go.dev/doc/"},
			{Text: "Go standard library", URL: "https://pkg.go.dev/std"},
			{Text: "gonum", URL: "https://pkg.go.dev/gonum.org/v1/gonum"},
		},
	})
	if err != nil {
		fmt.Fprintf(stderr, "harmonium kernel: %v\n", err)
		return 1
	}
	// SIGINT interrupts the running cell (interrupt_mode "signal" frontends,
	// a terminal's Ctrl-C); SIGTERM and SIGHUP stop the kernel.
	sigint := make(chan os.Signal, 1)
	signal.Notify(sigint, os.Interrupt)
	defer signal.Stop(sigint)
	go func() {
		for range sigint {
			k.Interrupt()
		}
	}()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	if os.Getenv("JPY_PARENT_PID") != "" { // started by Jupyter: do not outlive it
		ctx = watchParent(ctx, time.Second, logger)
	}
	k.Run(ctx)
	return 0
}

// watchParent returns a context cancelled when the process's parent changes
// (the process that started it died and it was re-parented), checked every
// period, as ipykernel's parent poller does.
func watchParent(ctx context.Context, period time.Duration, logger *log.Logger) context.Context {
	ctx, cancel := context.WithCancel(ctx)
	parent := os.Getppid()
	go func() {
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if os.Getppid() != parent {
					logger.Printf("parent process %d is gone; shutting down", parent)
					cancel()
					return
				}
			}
		}
	}()
	return ctx
}

// openHistory opens the history file in the user's Jupyter data directory,
// shared by all Harmonium kernels so that history survives restarts.
func openHistory() (*kernel.History, error) {
	dir, err := kernel.JupyterDataDir()
	if err != nil {
		return nil, err
	}
	return kernel.OpenHistory(filepath.Join(dir, "harmonium", "history.jsonl"))
}

// lazyExecutor is an Executor whose real executor is still being created;
// each call waits for it.
type lazyExecutor struct {
	ready chan struct{}
	exec  kernel.Executor
	err   error
}

func startExecutor(newExec func() kernel.Executor) *lazyExecutor {
	l := &lazyExecutor{ready: make(chan struct{})}
	go func() {
		defer close(l.ready)
		defer func() {
			if r := recover(); r != nil {
				l.err = fmt.Errorf("the Go interpreter failed to start: %v", r)
			}
		}()
		l.exec = newExec()
	}()
	return l
}

func (l *lazyExecutor) get() (kernel.Executor, error) {
	<-l.ready
	return l.exec, l.err
}

// Execute implements kernel.Executor.
func (l *lazyExecutor) Execute(ctx context.Context, code string, opts kernel.ExecOptions, out kernel.Output) kernel.ExecResult {
	select {
	case <-l.ready:
	case <-ctx.Done():
		return kernel.ExecResult{Err: &kernel.ExecError{Name: "Interrupted", Value: "interrupted while the interpreter was starting"}}
	}
	e, err := l.get()
	if err != nil {
		return kernel.ExecResult{Err: &kernel.ExecError{Name: "StartupError", Value: err.Error()}}
	}
	return e.Execute(ctx, code, opts, out)
}

// Complete implements kernel.Executor.
func (l *lazyExecutor) Complete(code string, cursor int) kernel.Completion {
	if e, err := l.get(); err == nil {
		return e.Complete(code, cursor)
	}
	return kernel.Completion{Start: cursor, End: cursor}
}

// Inspect implements kernel.Executor.
func (l *lazyExecutor) Inspect(code string, cursor, detailLevel int) (map[string]any, bool) {
	if e, err := l.get(); err == nil {
		return e.Inspect(code, cursor, detailLevel)
	}
	return nil, false
}

// IsComplete implements kernel.Executor.
func (l *lazyExecutor) IsComplete(code string) (string, string) {
	if e, err := l.get(); err == nil {
		return e.IsComplete(code)
	}
	return "unknown", ""
}
