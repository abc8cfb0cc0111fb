//go:build unix

package atomicfile

import (
	"errors"
	"os"
	"syscall"
)

// nofollow keeps RemoveStale from opening a symbolic link planted under a
// temporary file's name.
const nofollow = syscall.O_NOFOLLOW

// lock takes, without waiting, the exclusive advisory lock a writer holds
// on its temporary file (and RemoveStale takes to prove that no writer
// does); the kernel releases it when the file is closed or the process dies.
func lock(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// isUnsupportedSync reports whether a directory sync failed only because
// the file system does not sync directories.
func isUnsupportedSync(err error) bool {
	return errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP)
}

// isUnsupportedLock reports whether a lock failed only because the file
// system has no advisory locks.
func isUnsupportedLock(err error) bool {
	return errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.ENOLCK)
}
