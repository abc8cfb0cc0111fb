//go:build !unix

package atomicfile

import "os"

// nofollow: the open flags have no no-follow option here.
const nofollow = 0

// lock: without advisory locks, a temporary file unmodified for StaleAfter
// counts as abandoned.
func lock(*os.File) error { return nil }

// isUnsupportedSync: directories cannot be synced here.
func isUnsupportedSync(error) bool { return true }

// isUnsupportedLock: lock never fails here.
func isUnsupportedLock(error) bool { return false }
