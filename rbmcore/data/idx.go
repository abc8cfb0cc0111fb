package data

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"gonum.org/v1/gonum/mat"
)

// IDXOptions controls LoadIDX. The zero value loads every image and scales
// the values of unsigned-byte files to [0, 1] (other types are kept as is).
type IDXOptions struct {
	// Binarize turns each value x into 1 if x ≥ Threshold, 0 otherwise
	// (seed 001: MNIST pixels thresholded at the midpoint, Threshold 128,
	// ties go to 1), giving a "binary" set.
	Binarize  bool
	Threshold float64
	// Limit, when positive, reads only the first Limit items.
	Limit int
}

// countingReader counts the bytes read from the (decompressed) stream so that
// errors can report the offset at fault.
type countingReader struct {
	r   io.Reader
	off int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.off += int64(n)
	return n, err
}

// openMaybeGzip opens path and transparently decompresses it when it starts
// with the gzip magic bytes. The returned description says whether offsets
// refer to the decompressed stream.
func openMaybeGzip(path string) (io.Reader, func() error, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, "", fmt.Errorf("data: %w", err)
	}
	br := bufio.NewReaderSize(f, 1<<16)
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, nil, "", fmt.Errorf("data: %s: bad gzip header: %w", path, err)
		}
		return zr, f.Close, "decompressed byte offset", nil
	}
	return br, f.Close, "byte offset", nil
}

// readFull reads exactly len(p) bytes, turning a short read into an error
// that names the file and offset.
func readFull(cr *countingReader, p []byte, path, offKind, what string) error {
	start := cr.off
	n, err := io.ReadFull(cr, p)
	if err == nil {
		return nil
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("data: %s: truncated at %s %d while reading %s (needed %d bytes from offset %d, got %d)",
			path, offKind, start+int64(n), what, len(p), start, n)
	}
	return fmt.Errorf("data: %s: at %s %d while reading %s: %w", path, offKind, start+int64(n), what, err)
}

// idxHeader is the parsed header of an IDX file.
type idxHeader struct {
	typ  byte
	dims []int
}

func readIDXHeader(cr *countingReader, path, offKind string) (idxHeader, error) {
	var magic [4]byte
	if err := readFull(cr, magic[:], path, offKind, "the IDX magic number"); err != nil {
		return idxHeader{}, err
	}
	if magic[0] != 0 || magic[1] != 0 {
		return idxHeader{}, fmt.Errorf("data: %s: byte offset 0: not an IDX file (magic %x, want 00 00 tt nd)", path, magic)
	}
	h := idxHeader{typ: magic[2]}
	if idxSize(h.typ) == 0 {
		return idxHeader{}, fmt.Errorf("data: %s: byte offset 2: unknown IDX data type 0x%02x", path, h.typ)
	}
	nd := int(magic[3])
	if nd < 1 {
		return idxHeader{}, fmt.Errorf("data: %s: byte offset 3: IDX file with %d dimensions", path, nd)
	}
	buf := make([]byte, 4*nd)
	if err := readFull(cr, buf, path, offKind, "the IDX dimensions"); err != nil {
		return idxHeader{}, err
	}
	total := int64(1)
	for k := 0; k < nd; k++ {
		d := binary.BigEndian.Uint32(buf[4*k:])
		if d == 0 || d > 1<<31-1 {
			return idxHeader{}, fmt.Errorf("data: %s: byte offset %d: dimension %d is %d", path, 4+4*k, k, d)
		}
		total *= int64(d)
		if total > 1<<34 {
			return idxHeader{}, fmt.Errorf("data: %s: byte offset %d: IDX dimensions too large", path, 4+4*k)
		}
		h.dims = append(h.dims, int(d))
	}
	return h, nil
}

func idxSize(typ byte) int {
	switch typ {
	case 0x08, 0x09:
		return 1
	case 0x0B:
		return 2
	case 0x0C, 0x0D:
		return 4
	case 0x0E:
		return 8
	}
	return 0
}

func idxValue(typ byte, b []byte) float64 {
	switch typ {
	case 0x08:
		return float64(b[0])
	case 0x09:
		return float64(int8(b[0]))
	case 0x0B:
		return float64(int16(binary.BigEndian.Uint16(b)))
	case 0x0C:
		return float64(int32(binary.BigEndian.Uint32(b)))
	case 0x0D:
		return float64(math.Float32frombits(binary.BigEndian.Uint32(b)))
	default:
		return math.Float64frombits(binary.BigEndian.Uint64(b))
	}
}

// LoadIDX reads an IDX file (the MNIST format; gzip-compressed or not,
// detected from the content) whose first dimension indexes items: a file of
// shape n×28×28 gives n rows of 784 columns (row-major pixels). Unsigned
// bytes are scaled to [0, 1] unless opts.Binarize is set, which thresholds
// the raw values instead (kind "binary"). A truncated or corrupt file gives
// an error naming the file and the (decompressed) byte offset.
func LoadIDX(path string, opts IDXOptions) (*Set, error) {
	r, closeFn, offKind, err := openMaybeGzip(path)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	cr := &countingReader{r: r}
	h, err := readIDXHeader(cr, path, offKind)
	if err != nil {
		return nil, err
	}
	n := h.dims[0]
	if opts.Limit > 0 && opts.Limit < n {
		n = opts.Limit
	}
	width := 1
	for _, d := range h.dims[1:] {
		width *= d
	}
	size := idxSize(h.typ)
	x := mat.NewDense(n, width, nil)
	buf := make([]byte, width*size)
	scale := 1.0
	if h.typ == 0x08 && !opts.Binarize {
		scale = 255 // unsigned bytes are divided by 255
	}
	for i := 0; i < n; i++ {
		if err := readFull(cr, buf, path, offKind, fmt.Sprintf("item %d of %d", i, h.dims[0])); err != nil {
			return nil, err
		}
		row := x.RawRowView(i)
		for c := range row {
			v := idxValue(h.typ, buf[c*size:])
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("data: %s: %s %d: non-finite value %v", path, offKind, cr.off-int64(len(buf))+int64(c*size), v)
			}
			if opts.Binarize {
				if v >= opts.Threshold {
					v = 1
				} else {
					v = 0
				}
			} else {
				v /= scale
			}
			row[c] = v
		}
	}
	if opts.Limit <= 0 || opts.Limit >= h.dims[0] {
		if err := checkTrailing(cr, path, offKind); err != nil {
			return nil, err
		}
	}
	kind := KindReal
	if opts.Binarize {
		kind = KindBinary
	}
	return &Set{X: x, Kind: kind, Q: 1, Source: path}, nil
}

// checkTrailing reports data after the declared end of the file (and
// surfaces gzip checksum errors, which only appear at the end of the stream).
func checkTrailing(cr *countingReader, path, offKind string) error {
	var one [1]byte
	start := cr.off
	n, err := cr.Read(one[:])
	if n > 0 {
		return fmt.Errorf("data: %s: unexpected data after the end of the IDX payload at %s %d", path, offKind, start)
	}
	if err != nil && err != io.EOF {
		return fmt.Errorf("data: %s: at %s %d: %w", path, offKind, start, err)
	}
	return nil
}

// LoadIDXLabels reads an IDX label file (one dimension, unsigned bytes or
// integers), gzipped or not.
func LoadIDXLabels(path string) ([]int, error) {
	r, closeFn, offKind, err := openMaybeGzip(path)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	cr := &countingReader{r: r}
	h, err := readIDXHeader(cr, path, offKind)
	if err != nil {
		return nil, err
	}
	if len(h.dims) != 1 || h.typ == 0x0D || h.typ == 0x0E {
		return nil, fmt.Errorf("data: %s: a label file must be a 1-dimensional integer IDX file (type 0x%02x, %d dimensions)", path, h.typ, len(h.dims))
	}
	size := idxSize(h.typ)
	buf := make([]byte, h.dims[0]*size)
	if err := readFull(cr, buf, path, offKind, "the labels"); err != nil {
		return nil, err
	}
	if err := checkTrailing(cr, path, offKind); err != nil {
		return nil, err
	}
	labels := make([]int, h.dims[0])
	for i := range labels {
		labels[i] = int(idxValue(h.typ, buf[i*size:]))
	}
	return labels, nil
}
