package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// writeFileAtomic replaces path by data so that a crash at any moment leaves
// either the old file or the new one, never a truncated mix: the data goes to
// a temporary file in the same directory (same file system, so the rename is
// atomic), is fsynced, and is renamed over path; the directory is then synced
// so the rename itself survives a power cut. An existing file's permission
// bits are kept; a new file gets perm.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	fail := func(err error) error {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s (via %s): %w", path, tmp.Name(), err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(err)
	}
	if err := tmp.Chmod(perm); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	// A directory that cannot be opened or synced (some network file
	// systems) still has the complete new file; only durability is lost.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
