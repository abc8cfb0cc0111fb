package data

import (
	"encoding/binary"
	"math"
	"os"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/allocs"
)

// idxHeader builds the header of an unsigned-byte IDX file with the given
// dimensions (no data).
func idxHeaderBytes(dims ...uint32) []byte {
	b := []byte{0, 0, 0x08, byte(len(dims))}
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, d)
	}
	return b
}

// refusedSmall checks that load refused the file (error naming it and the
// parts), allocating less than limit bytes.
func refusedSmall(t *testing.T, path string, limit uint64, load func() error, parts ...string) {
	t.Helper()
	var err error
	n := allocs.Bytes(func() { err = load() })
	wantErr(t, err, append([]string{path}, parts...)...)
	if n > limit {
		t.Errorf("%s: refusing it allocated %d bytes (limit %d)", path, n, limit)
	}
}

// TestTinyHostileIDX: a 16-byte IDX header declaring 2^34 values is refused
// before the 128 GiB it declares are allocated (it was a fatal out of
// memory), compressed or not, as images or labels.
func TestTinyHostileIDX(t *testing.T) {
	hdr := idxHeaderBytes(65536, 512, 512)
	if len(hdr) != 16 {
		t.Fatal(len(hdr))
	}
	plain := writeFile(t, "huge.idx", hdr)
	refusedSmall(t, plain, 1<<20, func() error { _, err := LoadIDX(plain, IDXOptions{}); return err },
		"byte offset 12", "[65536 512 512]", "more than the 2147483648 values")
	// Dimensions whose product overflows int64 (found by FuzzIDX: a
	// makeslice panic).
	plain = writeFile(t, "wrap.idx", idxHeaderBytes(3, 0x61303030, 0x78303030))
	refusedSmall(t, plain, 1<<20, func() error { _, err := LoadIDX(plain, IDXOptions{Limit: 1}); return err },
		"byte offset 8", "more than the 2147483648 values")
	plain = writeFile(t, "max.idx", idxHeaderBytes(32768, 256, 256))
	refusedSmall(t, plain, 1<<20, func() error { _, err := LoadIDX(plain, IDXOptions{}); return err },
		"truncated at byte offset 16", "item 0 of 32768", "[32768 256 256]", "2147483648 bytes")
	packed := writeFile(t, "huge.idx.gz", gz(hdr))
	refusedSmall(t, packed, 1<<20, func() error { _, err := LoadIDX(packed, IDXOptions{}); return err },
		"more than the 2147483648")
	// Within the maximum but far beyond the data: read incrementally,
	// memory follows the 1 MiB actually present, not the 8 GiB declared.
	body := append(idxHeaderBytes(1<<20, 1024), make([]byte, 1<<20)...)
	packed = writeFile(t, "short.idx.gz", gz(body))
	refusedSmall(t, packed, 64<<20, func() error { _, err := LoadIDX(packed, IDXOptions{}); return err },
		"truncated at decompressed byte offset 1048588", "item 1024 of 1048576")
	labels := writeFile(t, "labels.idx", idxHeaderBytes(1<<31-1))
	refusedSmall(t, labels, 1<<20, func() error { _, err := LoadIDXLabels(labels); return err },
		"truncated at byte offset 8", "2147483647 bytes")
	labels = writeFile(t, "labels.idx.gz", gz(idxHeaderBytes(1<<31-1)))
	refusedSmall(t, labels, 1<<20, func() error { _, err := LoadIDXLabels(labels); return err },
		"truncated at decompressed byte offset 8")
	// Limit reads what it needs: the first items of a truncated file load.
	raw := idxBytes(3, 2, 2, func(i, k int) byte { return byte(i) })
	set, err := LoadIDX(writeFile(t, "cut.idx", raw[:len(raw)-1]), IDXOptions{Limit: 2})
	if err != nil || set.Len() != 2 || set.X.At(1, 3) != 1.0/255 {
		t.Errorf("Limit 2 of a file truncated in item 3: %v, %v", set, err)
	}
}

// npyFile builds a version-1 .npy file from a header dictionary and data.
func npyFile(header string, data []byte) []byte {
	b := []byte("\x93NUMPY\x01\x00")
	b = binary.LittleEndian.AppendUint16(b, uint16(len(header)+1))
	b = append(b, header+"\n"...)
	return append(b, data...)
}

func f64s(xs ...float64) []byte {
	var b []byte
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

// TestNPYHostile: an overflowing shape is an error (it was a makeslice
// panic), and the header is parsed as a dictionary: a key that merely
// contains 'descr' cannot change the dtype (3.25 was read as 4.6e18).
func TestNPYHostile(t *testing.T) {
	for _, c := range []struct{ name, header, want string }{
		{"wrap.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", "truncated"},
		{"max.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (9223372036854775807, 9223372036854775807), }", "truncated"},
		{"over.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (92233720368547758070,), }", "shape"},
		{"extra.npy", `{'x': "'descr': '<i8'", 'descr': '<f8', 'fortran_order': False, 'shape': (1,), }`, `unexpected key "x"`},
		{"quoted.npy", `{"'descr'": '<i8', 'descr': '<f8', 'fortran_order': False, 'shape': (1,), }`, `unexpected key "'descr'"`},
		{"twice.npy", "{'descr': '<i8', 'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", `key "descr" repeated`},
		{"missing.npy", "{'descr': '<f8', 'shape': (1,), }", `missing key "fortran_order"`},
		{"after.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), } x", "after the dictionary"},
		{"bool.npy", "{'descr': '<f8', 'fortran_order': 0, 'shape': (1,), }", "fortran_order"},
		{"neg.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (-1,), }", "shape"},
		{"open.npy", "{'descr': '<f8, 'fortran_order': False, 'shape': (1,), }", "expected ','"},
	} {
		path := writeFile(t, c.name, npyFile(c.header, f64s(3.25)))
		refusedSmall(t, path, 1<<20, func() error { _, err := LoadNPY(path); return err }, c.want)
	}
	// Headers numpy accepts, written differently from SaveNPY.
	for _, header := range []string{
		`{"shape": (2,), "fortran_order": False, "descr": "<f8"}`,
		"{'descr':'<f8','fortran_order':False,'shape':(2L,)}",
		"  { 'descr' : '<f8' ,\t'fortran_order' : False , 'shape' : ( 2 , ) , }   ",
	} {
		set, err := LoadNPY(writeFile(t, "ok.npy", npyFile(header, f64s(3.25, -1))))
		if err != nil {
			t.Errorf("header %s: %v", header, err)
			continue
		}
		if want := mat.NewDense(2, 1, []float64{3.25, -1}); !mat.Equal(set.X, want) {
			t.Errorf("header %s: read %v", header, mat.Formatted(set.X))
		}
	}
}

// TestSaveNPYRemovesStaleTemps: SaveNPY, like every atomic write of
// rbmcore, removes the temporary file a crashed write of the same path
// left behind.
func TestSaveNPYRemovesStaleTemps(t *testing.T) {
	path := writeFile(t, "x.npy", nil)
	stale := path[:len(path)-len("x.npy")] + ".x.npy.tmp31415"
	if err := os.WriteFile(stale, []byte("\x93NUMPY"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(stale, time.Unix(0, 0), time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	if err := SaveNPY(path, mat.NewDense(1, 1, []float64{2})); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temporary file still there: %v", err)
	}
	if set, err := LoadNPY(path); err != nil || set.X.At(0, 0) != 2 {
		t.Errorf("read back %v, %v", set, err)
	}
}
