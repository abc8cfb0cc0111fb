//go:build unix

package atomicfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A new file gets 0666 less the umask, as from os.Create, whatever the
// umask; a replaced file keeps its permission bits.
func TestWritePermissions(t *testing.T) {
	dir := t.TempDir()
	defer syscall.Umask(syscall.Umask(0o022))
	for _, c := range []struct {
		umask int
		want  os.FileMode
	}{{0o022, 0o644}, {0o027, 0o640}, {0o077, 0o600}} {
		syscall.Umask(c.umask)
		path := filepath.Join(dir, "new")
		os.Remove(path)
		if err := WriteBytes(path, []byte("x")); err != nil {
			t.Fatal(err)
		}
		if got := mode(t, path); got != c.want {
			t.Errorf("umask %#o: new file has mode %v, want %v", c.umask, got, c.want)
		}
	}
	syscall.Umask(0o022)
	for _, perm := range []os.FileMode{0o600, 0o640, 0o755} {
		path := filepath.Join(dir, "old")
		if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, perm); err != nil {
			t.Fatal(err)
		}
		if err := WriteBytes(path, []byte("new")); err != nil {
			t.Fatal(err)
		}
		if got := mode(t, path); got != perm {
			t.Errorf("a file of mode %v was replaced by one of mode %v", perm, got)
		}
		if s := read(t, path); s != "new" {
			t.Errorf("content %q after the write", s)
		}
	}
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

// On a file system without advisory locks (flock fails with ENOSYS, as on
// Lustre mounted without flock) a write still succeeds; any other locking
// error still fails it, leaving nothing behind.
func TestWriteWithoutLocks(t *testing.T) {
	defer func(l func(*os.File) error) { lockFile = l }(lockFile)
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	lockFile = func(*os.File) error { return syscall.ENOSYS }
	if err := WriteBytes(path, []byte("x")); err != nil {
		t.Fatalf("without locks: %v", err)
	}
	if s := read(t, path); s != "x" {
		t.Errorf("content %q", s)
	}
	lockFile = func(*os.File) error { return syscall.EBADF }
	if err := WriteBytes(path, []byte("y")); err == nil {
		t.Error("a write whose lock failed with EBADF succeeded")
	}
	if s := read(t, path); s != "x" {
		t.Errorf("content %q after the failed write", s)
	}
	if n := names(t, dir); len(n) != 1 {
		t.Errorf("files left behind: %v", n)
	}
}
