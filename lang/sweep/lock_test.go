package sweep

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// holdLock takes the driver lock of dir through its own open file
// description, as another process (or a task between fork and exec) would.
func holdLock(t *testing.T, dir, owner string) *os.File {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, driverLock), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	f.WriteString(owner)
	return f
}

// A lock released shortly after the driver starts, as one held by a driver
// that was just killed, is taken, and the lock file names the new driver.
func TestLockDriverWaitsForBriefHolder(t *testing.T) {
	dir := t.TempDir()
	f := holdLock(t, dir, "pid 1 on elsewhere\n")
	time.AfterFunc(200*time.Millisecond, func() { f.Close() })
	unlock, err := lockDriver(context.Background(), dir)
	if err != nil {
		t.Fatalf("the lock was released after 200 ms, but lockDriver refused: %v", err)
	}
	defer unlock()
	b, _ := os.ReadFile(filepath.Join(dir, driverLock))
	if want := "pid " + strconv.Itoa(os.Getpid()) + " "; !strings.HasPrefix(string(b), want) {
		t.Errorf("lock file says %q, want it to start with %q", b, want)
	}
	if !driverRunning(dir) {
		t.Error("driverRunning is false while the driver holds the lock")
	}
}

// A lock held for the whole sweep, as by a second driver, is refused with
// an error that names the directory and the driver holding it.
func TestLockDriverRefusesRunningDriver(t *testing.T) {
	dir := t.TempDir()
	f := holdLock(t, dir, "pid 4242 on node7\n")
	defer f.Close()
	_, err := lockDriver(context.Background(), dir)
	if err == nil {
		t.Fatal("a second driver took a held lock")
	}
	for _, want := range []string{dir, "another driver", "pid 4242 on node7"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// A cancelled context stops the wait at once.
func TestLockDriverCancelled(t *testing.T) {
	dir := t.TempDir()
	f := holdLock(t, dir, "pid 4242 on node7\n")
	defer f.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if _, err := lockDriver(ctx, dir); err == nil {
		t.Fatal("took a held lock")
	}
	if d := time.Since(start); d > lockWait/2 {
		t.Errorf("a cancelled lockDriver waited %v", d)
	}
}
