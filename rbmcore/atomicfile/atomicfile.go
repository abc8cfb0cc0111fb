// Package atomicfile writes files so that a reader, or the next run after a
// crash, sees either the old content or the complete new content, never a
// mix: the data go to a temporary file in the target's directory, which is
// synced, renamed over the target, and the directory is synced so that the
// rename itself survives a power cut.
//
// A new file gets the permission bits os.Create would give it (0666 less the
// process's umask), and a replaced file keeps its own, so that writing
// through this package changes nothing but the content.
//
// A writer killed between creating and renaming its temporary file leaves
// it behind. The next Write to the same target removes such leftovers: the
// files named like its own temporary files (".NAME.tmp" followed by digits)
// that no live writer holds (each writer keeps an advisory lock on its
// temporary file, released by the kernel when the process dies) and that
// have not been modified for StaleAfter.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// StaleAfter is how long a temporary file must have been left unmodified
// before Write removes it as a leftover. It closes the short window between
// another writer creating its temporary file and locking it.
const StaleAfter = 5 * time.Second

// tempPrefix is the start of the names of path's temporary files; createTemp
// appends a decimal random number to it.
func tempPrefix(path string) string {
	return "." + filepath.Base(path) + ".tmp"
}

// createTemp creates a new temporary file for path in dir. Unlike
// os.CreateTemp, which makes the file private, it creates the file with mode
// 0666, which the kernel reduces by the umask, as os.Create does; a file that
// replaces an existing one then gets that file's permission bits.
func createTemp(dir, path string) (*os.File, error) {
	prefix := filepath.Join(dir, tempPrefix(path))
	for try := 0; ; try++ {
		f, err := os.OpenFile(prefix+strconv.FormatUint(uint64(rand.Uint32()), 10), os.O_RDWR|os.O_CREATE|os.O_EXCL|nofollow, 0o666)
		if errors.Is(err, os.ErrExist) && try < 1000 {
			continue
		}
		if err != nil {
			return nil, err
		}
		if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
			if err := f.Chmod(st.Mode().Perm()); err != nil {
				f.Close()
				os.Remove(f.Name())
				return nil, err
			}
		}
		return f, nil
	}
}

// Write replaces path with what write produces, atomically: write gets a
// buffered writer on a temporary file in path's directory; on success the
// file is flushed, synced, renamed over path and the directory synced. On
// any error the temporary file is removed and path is left as it was.
// Leftover temporary files of path from crashed writers are removed first.
func Write(path string, write func(w io.Writer) error) error {
	dir := filepath.Dir(path)
	RemoveStale(path)
	f, err := createTemp(dir, path)
	if err != nil {
		return err
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return err
	}
	// Some cluster file systems (Lustre mounted without flock, some FUSE
	// mounts) have no advisory locks: the write goes on unlocked, and only
	// StaleAfter protects its temporary file from another writer's cleanup.
	if err := lockFile(f); err != nil && !isUnsupportedLock(err) {
		return fail(fmt.Errorf("locking %s: %w", tmp, err))
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	if err := write(bw); err != nil {
		return fail(err)
	}
	if err := bw.Flush(); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	// Closing releases the lock; the file was modified just now, so
	// StaleAfter still protects it until the rename.
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(dir)
}

// WriteBytes replaces path with data atomically (see Write).
func WriteBytes(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// RemoveStale removes the leftover temporary files of path (see the package
// documentation) and returns the names it removed. Errors are ignored: a
// leftover that cannot be removed is only a wasted file.
func RemoveStale(path string) []string {
	dir := filepath.Dir(path)
	prefix := tempPrefix(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		name := e.Name()
		if !isTempName(name, prefix) || !e.Type().IsRegular() {
			continue
		}
		full := filepath.Join(dir, name)
		if removeIfAbandoned(full) {
			removed = append(removed, full)
		}
	}
	return removed
}

// isTempName reports whether name is prefix followed by one or more digits,
// the names createTemp gives.
func isTempName(name, prefix string) bool {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok || rest == "" {
		return false
	}
	for _, c := range rest {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// removeIfAbandoned removes the temporary file full if it is a regular file
// not modified for StaleAfter and no writer holds its lock.
func removeIfAbandoned(full string) bool {
	f, err := os.OpenFile(full, os.O_RDWR|nofollow, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || time.Since(st.ModTime()) < StaleAfter {
		return false
	}
	if lockFile(f) != nil {
		return false // a live writer holds it
	}
	return os.Remove(full) == nil
}

// lockFile is lock, replaced in tests by a file system without locks.
var lockFile = lock

// syncDir syncs the directory dir so that a rename in it is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !isUnsupportedSync(err) {
		return fmt.Errorf("syncing directory %s: %w", dir, err)
	}
	return nil
}
