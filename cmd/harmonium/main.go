// Command harmonium is a Jupyter kernel for Go: it runs notebook cells with
// the yaegi interpreter, with the compiled rbmcore library for Restricted
// Boltzmann Machines preloaded.
//
// Usage:
//
//	harmonium kernel -f CONNECTION_FILE   serve one kernel (what Jupyter runs)
//	harmonium install [--user | --sys-prefix | --prefix DIR] [--name NAME]
//	                                      register the kernel with Jupyter
//	harmonium run NOTEBOOK.ipynb|SCRIPT.go
//	                                      execute a notebook or script headlessly
//	harmonium sweep run|status|collect|cancel|task ...
//	                                      run a parameter sweep locally or on Slurm
//	harmonium version                     print the version
package main

import (
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/harmonium-rbm/harmonium/kernel"
)

// version is the Harmonium release; override with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// subcommand is one `harmonium` subcommand: it gets the arguments after its
// name and returns the process exit status.
type subcommand struct {
	run   func(args []string, stdout, stderr io.Writer) int
	usage string
}

// subcommands lists the subcommands; run.go adds "run" when it is part of the build.
var subcommands = map[string]subcommand{
	"kernel":  {kernelCommand, "kernel -f CONNECTION_FILE      serve a Jupyter kernel"},
	"install": {installCommand, "install [--user | --sys-prefix | --prefix DIR] [--name NAME]\n                                register the kernel with Jupyter"},
	"version": {versionCommand, "version                       print the version"},
}

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := subcommands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "harmonium: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	return c.run(args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: harmonium COMMAND [ARGS]\n\ncommands:")
	for _, name := range []string{"kernel", "install", "run", "sweep", "version"} {
		if c, ok := subcommands[name]; ok {
			fmt.Fprintf(w, "  %s\n", c.usage)
		}
	}
}

func versionCommand(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "harmonium version: unexpected argument %q\n", args[0])
		return 2
	}
	fmt.Fprintf(stdout, "harmonium %s (%s %s/%s, Jupyter protocol %s)\n",
		version, runtime.Version(), runtime.GOOS, runtime.GOARCH, kernel.ProtocolVersion)
	return 0
}
