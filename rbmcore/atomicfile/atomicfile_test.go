package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// names lists the entries of dir.
func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func TestWriteReplacesOrKeeps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.json")
	if err := WriteBytes(path, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := WriteBytes(path, []byte("two")); err != nil {
		t.Fatal(err)
	}
	if got := read(t, path); got != "two" {
		t.Fatalf("content %q, want two", got)
	}
	// A failing writer leaves the old content and no temporary file.
	boom := errors.New("boom")
	err := Write(path, func(w io.Writer) error {
		w.Write([]byte("half of thr"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want boom", err)
	}
	if got := read(t, path); got != "two" {
		t.Fatalf("after a failed write: content %q, want two", got)
	}
	if got := names(t, dir); !slices.Equal(got, []string{"model.json"}) {
		t.Fatalf("directory holds %v, want only model.json", got)
	}
}

// TestRemoveStale: the leftovers of a crashed writer of the same target go,
// and nothing else: not another target's, not other names, not a directory
// or symbolic link of a matching name, not a recent file, not a file a live
// writer holds locked.
func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.ckpt")
	old := time.Now().Add(-time.Hour)
	mk := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stale1, stale2 := mk(".run.ckpt.tmp123456"), mk(".run.ckpt.tmp9")
	keep := []string{
		mk(".other.ckpt.tmp123"),  // another target
		mk(".run.ckpt.tmp"),       // no digits
		mk(".run.ckpt.tmp12x"),    // not CreateTemp's pattern
		mk("run.ckpt.tmp123"),     // no leading dot
		mk(".run.ckpt.tmp77.bak"), // suffix
	}
	recent := filepath.Join(dir, ".run.ckpt.tmp555")
	if err := os.WriteFile(recent, []byte("being written"), 0o644); err != nil {
		t.Fatal(err)
	}
	keep = append(keep, recent)
	locked := mk(".run.ckpt.tmp42")
	lf, err := os.OpenFile(locked, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	if err := lock(lf); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(locked, old, old); err != nil {
		t.Fatal(err)
	}
	keep = append(keep, locked)
	sub := filepath.Join(dir, ".run.ckpt.tmp31")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	keep = append(keep, sub)
	link := filepath.Join(dir, ".run.ckpt.tmp32")
	target := mk("precious")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	keep = append(keep, link, target)

	if err := WriteBytes(path, []byte("state")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{stale1, stale2} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("stale %s still there (%v)", filepath.Base(p), err)
		}
	}
	for _, p := range keep {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(p), err)
		}
	}
	if got := read(t, path); got != "state" {
		t.Errorf("content %q", got)
	}
	// Once its writer is gone (the lock released), the locked one goes too.
	lf.Close()
	if got := RemoveStale(path); !slices.Equal(got, []string{locked}) {
		t.Errorf("RemoveStale removed %v, want %v", got, []string{locked})
	}
}
