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
	// ([BR21]: MNIST pixels thresholded at the midpoint, Threshold 128,
	// ties go to 1), giving a "binary" set.
	Binarize  bool
	Threshold float64 // the binarisation threshold, in the file's units
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

// maxIDXValues is the largest number of values LoadIDX and LoadIDXLabels
// read from one file (2^31: 16 GiB as float64).
const maxIDXValues = 1 << 31

// idxStream is an IDX file opened for reading, decompressed if need be.
type idxStream struct {
	countingReader
	path    string
	offKind string // what offsets count: "byte offset" or "decompressed byte offset"
	size    int64  // the file's length when not compressed, -1 when compressed
}

// newIDXStream reads the IDX file path from r, transparently decompressing
// it when it starts with the gzip magic bytes; size is r's length.
func newIDXStream(r io.Reader, size int64, path string) (*idxStream, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("data: %s: bad gzip header: %w", path, err)
		}
		return &idxStream{countingReader: countingReader{r: zr}, path: path, offKind: "decompressed byte offset", size: -1}, nil
	}
	return &idxStream{countingReader: countingReader{r: br}, path: path, offKind: "byte offset", size: size}, nil
}

// openIDX opens the IDX file path (see newIDXStream).
func openIDX(path string) (*idxStream, *os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("data: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("data: %w", err)
	}
	s, err := newIDXStream(f, st.Size(), path)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return s, f, nil
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

func readIDXHeader(s *idxStream) (idxHeader, error) {
	cr, path, offKind := &s.countingReader, s.path, s.offKind
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
		h.dims = append(h.dims, int(d))
		// Divide rather than multiply: the product of the dimensions can
		// overflow.
		if total > maxIDXValues/int64(d) {
			return idxHeader{}, fmt.Errorf("data: %s: byte offset %d: the IDX dimensions %v (of %d) declare more than the %d values a file may hold",
				path, 4+4*k, h.dims, nd, maxIDXValues)
		}
		total *= int64(d)
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
//
// The sizes a header declares are checked before anything is allocated: an
// uncompressed file must hold the bytes they need, and at most 2^31 values
// are read from any file. A compressed file is decoded incrementally, so
// memory grows with the data actually present, not with what the header
// claims.
func LoadIDX(path string, opts IDXOptions) (*Set, error) {
	s, f, err := openIDX(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readIDX(s, opts)
}

// readIDX reads an IDX data set from s (see LoadIDX).
func readIDX(s *idxStream, opts IDXOptions) (*Set, error) {
	h, err := readIDXHeader(s)
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
	vals, err := readIDXValues(s, h, n, width)
	if err != nil {
		return nil, err
	}
	scale := 1.0
	if h.typ == 0x08 && !opts.Binarize {
		scale = 255 // unsigned bytes are divided by 255
	}
	for k, v := range vals {
		switch {
		case !opts.Binarize:
			vals[k] = v / scale
		case v >= opts.Threshold:
			vals[k] = 1
		default:
			vals[k] = 0
		}
	}
	if opts.Limit <= 0 || opts.Limit >= h.dims[0] {
		if err := checkTrailing(s); err != nil {
			return nil, err
		}
	}
	kind := KindReal
	if opts.Binarize {
		kind = KindBinary
	}
	return &Set{X: mat.NewDense(n, width, vals), Kind: kind, Q: 1, Source: s.path}, nil
}

// readIDXValues reads the next rows×width values of s, which follow the
// header h (rows items of width values). For an uncompressed file it
// checks their number against the bytes left before allocating; a
// compressed stream is read in chunks, the result growing only with the
// values actually read.
func readIDXValues(s *idxStream, h idxHeader, rows, width int) ([]float64, error) {
	size, count := idxSize(h.typ), rows*width // ≤ maxIDXValues (readIDXHeader)
	// where names the item holding the value at offset off.
	start := s.off
	where := func(off int64) string {
		return fmt.Sprintf("%s %d, in item %d of %d", s.offKind, off, (off-start)/int64(size*width), h.dims[0])
	}
	capacity := count
	if s.size >= 0 {
		if need := int64(count) * int64(size); need > s.size-start {
			return nil, fmt.Errorf("data: %s: truncated at %s: the IDX dimensions %v (byte offset 4) declare %d bytes of data from byte offset %d",
				s.path, where(s.size), h.dims, need, start)
		}
	} else {
		capacity = min(count, 1<<16)
	}
	vals := make([]float64, 0, capacity)
	chunk := make([]byte, min(count, 1<<16)*size)
	for len(vals) < count {
		buf := chunk[:min(count-len(vals), len(chunk)/size)*size]
		at := s.off
		n, err := io.ReadFull(&s.countingReader, buf)
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("data: %s: truncated at %s", s.path, where(at+int64(n)))
		} else if err != nil {
			return nil, fmt.Errorf("data: %s: at %s: %w", s.path, where(at+int64(n)), err)
		}
		for c := 0; c < len(buf); c += size {
			v := idxValue(h.typ, buf[c:])
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("data: %s: at %s: non-finite value %v", s.path, where(at+int64(c)), v)
			}
			vals = append(vals, v)
		}
	}
	return vals, nil
}

// checkTrailing reports data after the declared end of the file (and
// surfaces gzip checksum errors, which only appear at the end of the stream).
func checkTrailing(s *idxStream) error {
	var one [1]byte
	start := s.off
	n, err := s.Read(one[:])
	if n > 0 {
		return fmt.Errorf("data: %s: unexpected data after the end of the IDX payload at %s %d", s.path, s.offKind, start)
	}
	if err != nil && err != io.EOF {
		return fmt.Errorf("data: %s: at %s %d: %w", s.path, s.offKind, start, err)
	}
	return nil
}

// LoadIDXLabels reads an IDX label file (one dimension, unsigned bytes or
// integers), gzipped or not, with the size checks of LoadIDX.
func LoadIDXLabels(path string) ([]int, error) {
	s, f, err := openIDX(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readIDXLabels(s)
}

// readIDXLabels reads an IDX label file from s (see LoadIDXLabels).
func readIDXLabels(s *idxStream) ([]int, error) {
	h, err := readIDXHeader(s)
	if err != nil {
		return nil, err
	}
	if len(h.dims) != 1 || h.typ == 0x0D || h.typ == 0x0E {
		return nil, fmt.Errorf("data: %s: a label file must be a 1-dimensional integer IDX file (type 0x%02x, %d dimensions)", s.path, h.typ, len(h.dims))
	}
	vals, err := readIDXValues(s, h, h.dims[0], 1)
	if err != nil {
		return nil, err
	}
	if err := checkTrailing(s); err != nil {
		return nil, err
	}
	labels := make([]int, len(vals))
	for i, v := range vals {
		labels[i] = int(v)
	}
	return labels, nil
}
