package sweep_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/harmonium-rbm/harmonium/lang"
	"github.com/harmonium-rbm/harmonium/lang/sweep"
)

// The test binary doubles as the task command and as a driver process:
//
//	sweep.test sweep-task DIR I       what `harmonium sweep task DIR I` does
//	sweep.test sweep-drive DIR SCRIPT GRIDJSON [BACKEND]   a driver (killed by a test)
func TestMain(m *testing.M) {
	if len(os.Args) >= 2 {
		switch os.Args[1] {
		case "sweep-task":
			os.Exit(taskMain(os.Args[2:]))
		case "sweep-drive":
			os.Exit(driveMain(os.Args[2:]))
		}
	}
	code := m.Run()
	stopCluster()
	os.Exit(code)
}

func taskMain(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	i, err := strconv.Atoi(args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := sweep.ExecTask(ctx, args[0], i, lang.RunScript); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func driveMain(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	g, err := sweep.ParseGrid([]byte(args[2]))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	o := sweep.Options{Dir: args[0], Script: args[1], Grid: g, Jobs: 2, Command: taskCommand(), Poll: 300 * time.Millisecond}
	if len(args) > 3 {
		o.Backend = args[3]
	}
	_, err = sweep.Run(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// taskCommand runs tasks with this test binary.
func taskCommand() []string {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return []string{exe, "sweep-task"}
}

// waitFor polls cond every 50 ms until it holds (true) or the timeout
// passes (false, and the test fails); it may run on any goroutine.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Errorf("timed out after %v waiting for %s", timeout, what)
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}
