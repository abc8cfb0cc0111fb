// Command cutidx writes the excerpts of MNIST and Fashion-MNIST bundled in
// rbmcore/data/testdata: the first -n items of each of the eight official
// IDX files, as gzipped IDX files with the official names, in
// OUT/mnist and OUT/fashion-mnist. The official files are found and checked
// by data.MNIST and data.FashionMNIST, so the data must be
// available there; HARMONIUM_DATA is ignored, because it may point at the
// excerpts themselves. It prints the SHA-256 of each excerpt's decompressed
// content, the values recorded in datasets.go.
//
// Run from rbmcore/data with `go generate` (see datasets.go) or
//
//	go run ./testdata/cutidx -o testdata
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/harmonium-rbm/harmonium/rbmcore/data"
)

func main() {
	out := flag.String("o", "testdata", "output directory")
	n := flag.Int("n", 300, "items per excerpt (datasets.go's excerptItems)")
	flag.Parse()
	os.Unsetenv("HARMONIUM_DATA")
	ctx := context.Background()
	loaders := []struct {
		subdir string
		load   func(context.Context, string, data.CatalogueOptions) (*data.Set, error)
	}{{"mnist", data.MNIST}, {"fashion-mnist", data.FashionMNIST}}
	for _, l := range loaders {
		for split, prefix := range map[string]string{"train": "train", "test": "t10k"} {
			set, err := l.load(ctx, split, data.CatalogueOptions{Limit: 1})
			if err != nil {
				log.Fatal(err)
			}
			dir := filepath.Dir(set.Source)
			for _, kind := range []string{"images-idx3-ubyte", "labels-idx1-ubyte"} {
				name := prefix + "-" + kind
				if err := cut(filepath.Join(dir, name+".gz"), filepath.Join(*out, l.subdir, name+".gz"), *n); err != nil {
					log.Fatal(err)
				}
			}
		}
	}
}

// cut writes the first n items of the gzipped IDX file src to dst (gzipped,
// atomically) and prints the SHA-256 of the excerpt's decompressed content.
func cut(src, dst string, n int) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	var magic [4]byte
	if _, err := io.ReadFull(zr, magic[:]); err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	dims := make([]byte, 4*int(magic[3]))
	if _, err := io.ReadFull(zr, dims); err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	item := 1
	for k := 1; k < int(magic[3]); k++ {
		item *= int(binary.BigEndian.Uint32(dims[4*k:]))
	}
	binary.BigEndian.PutUint32(dims, uint32(n))
	var raw bytes.Buffer
	raw.Write(magic[:])
	raw.Write(dims)
	if _, err := io.CopyN(&raw, zr, int64(n*item)); err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(raw.Bytes())
	if err := zw.Close(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp := dst + ".tmp"
	if err := os.WriteFile(tmp, gz.Bytes(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, dst); err != nil {
		return err
	}
	fmt.Printf("%x  %s (%d items, %d bytes gzipped)\n", sha256.Sum256(raw.Bytes()), dst, n, gz.Len())
	return nil
}
