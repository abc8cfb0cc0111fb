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
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "harmonium kernel: finding its own executable to start the executor: %v\n", err)
		return 1
	}
	// Cells run in a child process (see supervisor): a fault the Go runtime
	// cannot recover resets the session instead of killing the kernel. The
	// child starts now and loads its interpreter while the kernel answers
	// kernel_info_request.
	sup := newSupervisor(exe, os.Stdout, stderr, log.New(stderr, "harmonium kernel: ", log.LstdFlags))
	defer sup.Close()
	return serveKernel(*connFile, sup, stderr)
}

// serveKernel runs a kernel with executor x on the connection file until it
// is shut down.
func serveKernel(connFile string, x kernel.Executor, stderr io.Writer) int {
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
		Executor:              x,
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
