package data

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

var (
	npyDescr   = regexp.MustCompile(`'descr'\s*:\s*'([^']*)'`)
	npyFortran = regexp.MustCompile(`'fortran_order'\s*:\s*(True|False)`)
	npyShape   = regexp.MustCompile(`'shape'\s*:\s*\(([^)]*)\)`)
)

// LoadNPY reads a numpy .npy file (format versions 1–3) holding a 1-D or 2-D
// array of bool, (u)int8/16/32/64 or float32/64, either byte order, C or
// Fortran order. A 1-D array becomes a single column. The kind is inferred:
// "binary" if every entry is 0 or 1, "spin" if every entry is ±1, "real"
// otherwise. Errors name the file and byte offset.
func LoadNPY(path string) (*Set, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	if len(raw) < 10 || string(raw[:6]) != "\x93NUMPY" {
		return nil, fmt.Errorf("data: %s: byte offset 0: not a .npy file (bad magic)", path)
	}
	major := raw[6]
	var hlen, off int
	switch major {
	case 1:
		hlen, off = int(binary.LittleEndian.Uint16(raw[8:10])), 10
	case 2, 3:
		if len(raw) < 12 {
			return nil, fmt.Errorf("data: %s: truncated at byte offset %d in the header length", path, len(raw))
		}
		hlen, off = int(binary.LittleEndian.Uint32(raw[8:12])), 12
	default:
		return nil, fmt.Errorf("data: %s: byte offset 6: unsupported .npy version %d", path, major)
	}
	if off+hlen > len(raw) {
		return nil, fmt.Errorf("data: %s: truncated at byte offset %d inside the header (declared to end at %d)", path, len(raw), off+hlen)
	}
	header := string(raw[off : off+hlen])
	data := raw[off+hlen:]
	dm := npyDescr.FindStringSubmatch(header)
	fm := npyFortran.FindStringSubmatch(header)
	sm := npyShape.FindStringSubmatch(header)
	if dm == nil || fm == nil || sm == nil {
		return nil, fmt.Errorf("data: %s: byte offset %d: malformed .npy header %q", path, off, header)
	}
	var shape []int
	for _, f := range strings.Split(sm[1], ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		d, err := strconv.Atoi(f)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("data: %s: byte offset %d: bad shape %q", path, off, sm[1])
		}
		shape = append(shape, d)
	}
	var rows, cols int
	switch len(shape) {
	case 1:
		rows, cols = shape[0], 1
	case 2:
		rows, cols = shape[0], shape[1]
	default:
		return nil, fmt.Errorf("data: %s: array of %d dimensions (shape %v), want 1 or 2", path, len(shape), shape)
	}
	decode, size, err := npyDecoder(dm[1])
	if err != nil {
		return nil, fmt.Errorf("data: %s: byte offset %d: %w", path, off, err)
	}
	if rows == 0 || cols == 0 {
		return nil, fmt.Errorf("data: %s: empty array (shape %v)", path, shape)
	}
	need := rows * cols * size
	if len(data) < need {
		return nil, fmt.Errorf("data: %s: truncated at byte offset %d: the %v array of %s needs %d data bytes from offset %d",
			path, len(raw), shape, dm[1], need, off+hlen)
	}
	if len(data) > need {
		return nil, fmt.Errorf("data: %s: unexpected data after the array at byte offset %d", path, off+hlen+need)
	}
	x := mat.NewDense(rows, cols, nil)
	fortran := fm[1] == "True"
	for k := 0; k < rows*cols; k++ {
		v := decode(data[k*size:])
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("data: %s: byte offset %d: non-finite value %v", path, off+hlen+k*size, v)
		}
		if fortran {
			x.Set(k%rows, k/rows, v)
		} else {
			x.Set(k/cols, k%cols, v)
		}
	}
	return &Set{X: x, Kind: inferKind(x), Q: 1, Source: path}, nil
}

// npyDecoder returns a decoder for a numpy dtype string such as "<f8".
func npyDecoder(descr string) (func([]byte) float64, int, error) {
	if len(descr) < 3 {
		return nil, 0, fmt.Errorf("unsupported dtype %q", descr)
	}
	var bo binary.ByteOrder = binary.LittleEndian
	switch descr[0] {
	case '<', '|', '=':
	case '>':
		bo = binary.BigEndian
	default:
		return nil, 0, fmt.Errorf("unsupported dtype %q", descr)
	}
	switch descr[1:] {
	case "b1", "u1":
		return func(b []byte) float64 { return float64(b[0]) }, 1, nil
	case "i1":
		return func(b []byte) float64 { return float64(int8(b[0])) }, 1, nil
	case "i2":
		return func(b []byte) float64 { return float64(int16(bo.Uint16(b))) }, 2, nil
	case "u2":
		return func(b []byte) float64 { return float64(bo.Uint16(b)) }, 2, nil
	case "i4":
		return func(b []byte) float64 { return float64(int32(bo.Uint32(b))) }, 4, nil
	case "u4":
		return func(b []byte) float64 { return float64(bo.Uint32(b)) }, 4, nil
	case "i8":
		return func(b []byte) float64 { return float64(int64(bo.Uint64(b))) }, 8, nil
	case "u8":
		return func(b []byte) float64 { return float64(bo.Uint64(b)) }, 8, nil
	case "f4":
		return func(b []byte) float64 { return float64(math.Float32frombits(bo.Uint32(b))) }, 4, nil
	case "f8":
		return func(b []byte) float64 { return math.Float64frombits(bo.Uint64(b)) }, 8, nil
	}
	return nil, 0, fmt.Errorf("unsupported dtype %q", descr)
}

// inferKind returns "binary" if every entry is 0 or 1, "spin" if every
// entry is ±1 and "real" otherwise.
func inferKind(x *mat.Dense) string {
	bin, spin := true, true
	r, _ := x.Dims()
	for i := 0; i < r && (bin || spin); i++ {
		for _, v := range x.RawRowView(i) {
			bin = bin && (v == 0 || v == 1)
			spin = spin && (v == 1 || v == -1)
		}
	}
	switch {
	case bin:
		return KindBinary
	case spin:
		return KindSpin
	}
	return KindReal
}

// SaveNPY writes x as a little-endian float64 C-order .npy file (version
// 1.0), readable by numpy.load. The file is written atomically (temporary
// file then rename).
func SaveNPY(path string, x mat.Matrix) error {
	r, c := x.Dims()
	header := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }", r, c)
	// Pad so that magic+version+len+header+'\n' is a multiple of 64 bytes.
	total := 10 + len(header) + 1
	header += strings.Repeat(" ", (64-total%64)%64) + "\n"
	buf := make([]byte, 0, 10+len(header)+8*r*c)
	buf = append(buf, "\x93NUMPY\x01\x00"...)
	buf = binary.LittleEndian.AppendUint16(buf, uint16(len(header)))
	buf = append(buf, header...)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(x.At(i, j)))
		}
	}
	return writeAtomic(path, buf)
}

// writeAtomic writes data to a temporary file beside path and renames it.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("data: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("data: writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("data: writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("data: %w", err)
	}
	return nil
}
