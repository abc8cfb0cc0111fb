package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A --name that is not a plain directory name is refused with an error
// naming the parameter, and nothing is written.
func TestInstallRejectsUnsafeNames(t *testing.T) {
	root := t.TempDir()
	prefix := filepath.Join(root, "prefix")
	for _, name := range []string{"..", ".", "../x", "a/b", "/abs", `a\b`, "", "x y", "ü", "a\x00b"} {
		code, _, errs := run("install", "--prefix", prefix, "--name", name)
		if code != 1 || !strings.Contains(errs, "--name") {
			t.Errorf("--name %q: exit %d, stderr %q; want 1 and an error naming --name", name, code, errs)
		}
	}
	var written []string
	filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			written = append(written, path)
		}
		return nil
	})
	if len(written) > 0 {
		t.Errorf("rejected names wrote %v", written)
	}
	// Dots inside a name are fine.
	if code, _, errs := run("install", "--prefix", prefix, "--name", "go-1.26..x"); code != 0 {
		t.Errorf("--name go-1.26..x: exit %d, %s", code, errs)
	}
}
