package atomicfile_test

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/harmonium-rbm/harmonium/rbmcore/atomicfile"
)

// A table written through Write: a reader of table.csv sees the old table
// or the whole new one, never a partial file, even if the writer crashes.
func ExampleWrite() {
	dir, err := os.MkdirTemp("", "atomicfile-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "table.csv")
	err = atomicfile.Write(path, func(w io.Writer) error {
		c := csv.NewWriter(w)
		c.Write([]string{"M", "p_median"})
		c.Write([]string{"200", "0.316"})
		c.Flush()
		return c.Error()
	})
	if err != nil {
		panic(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	fmt.Print(string(b))
	// Output:
	// M,p_median
	// 200,0.316
}

// WriteBytes replaces a file's content and keeps its permission bits.
func ExampleWriteBytes() {
	dir, err := os.MkdirTemp("", "atomicfile-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(path, []byte("old\n"), 0o640); err != nil {
		panic(err)
	}
	if err := os.Chmod(path, 0o640); err != nil {
		panic(err)
	}
	if err := atomicfile.WriteBytes(path, []byte("new\n")); err != nil {
		panic(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		panic(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s%v\n", b, st.Mode().Perm())
	// Output:
	// new
	// -rw-r-----
}
