package data

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/atomicfile"
)

// LoadNPY reads a numpy .npy file (format versions 1–3) holding a 1-D or 2-D
// array of bool, (u)int8/16/32/64 or float32/64, either byte order, C or
// Fortran order. A 1-D array becomes a single column. The kind is inferred:
// "binary" if every entry is 0 or 1, "spin" if every entry is ±1, "real"
// otherwise. The header dictionary must hold exactly the keys descr,
// fortran_order and shape (as numpy requires), and the data exactly the
// bytes the shape declares. Errors name the file and byte offset.
func LoadNPY(path string) (*Set, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	return readNPY(raw, path)
}

// readNPY decodes the content raw of the .npy file path (see LoadNPY).
func readNPY(raw []byte, path string) (*Set, error) {
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
	if hlen > len(raw)-off {
		return nil, fmt.Errorf("data: %s: truncated at byte offset %d inside the header (declared to end at %d)", path, len(raw), off+hlen)
	}
	h, err := parseNPYHeader(string(raw[off : off+hlen]))
	if err != nil {
		return nil, fmt.Errorf("data: %s: .npy header (byte offset %d): %w", path, off, err)
	}
	data := raw[off+hlen:]
	var rows, cols int
	switch len(h.shape) {
	case 1:
		rows, cols = h.shape[0], 1
	case 2:
		rows, cols = h.shape[0], h.shape[1]
	default:
		return nil, fmt.Errorf("data: %s: array of %d dimensions (shape %v), want 1 or 2", path, len(h.shape), h.shape)
	}
	decode, size, err := npyDecoder(h.descr)
	if err != nil {
		return nil, fmt.Errorf("data: %s: .npy header (byte offset %d): %w", path, off, err)
	}
	if rows == 0 || cols == 0 {
		return nil, fmt.Errorf("data: %s: empty array (shape %v)", path, h.shape)
	}
	// The shape must describe exactly the data present: compare in a way
	// that cannot overflow, before allocating.
	if rows > len(data)/size/cols {
		return nil, fmt.Errorf("data: %s: truncated at byte offset %d: the %v array of %s (header at byte offset %d) needs more than the %d data bytes from offset %d",
			path, len(raw), h.shape, h.descr, off, len(data), off+hlen)
	}
	need := rows * cols * size
	if len(data) > need {
		return nil, fmt.Errorf("data: %s: unexpected data after the array at byte offset %d", path, off+hlen+need)
	}
	x := mat.NewDense(rows, cols, nil)
	for k := 0; k < rows*cols; k++ {
		v := decode(data[k*size:])
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("data: %s: byte offset %d: non-finite value %v", path, off+hlen+k*size, v)
		}
		if h.fortran {
			x.Set(k%rows, k/rows, v)
		} else {
			x.Set(k/cols, k%cols, v)
		}
	}
	return &Set{X: x, Kind: inferKind(x), Q: 1, Source: path}, nil
}

// npyHeader is the header dictionary of a .npy file.
type npyHeader struct {
	descr   string
	fortran bool
	shape   []int
}

// parseNPYHeader parses the header dictionary, a Python literal such as
// {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), } padded with
// spaces and a newline. It accepts exactly the keys descr (a string),
// fortran_order (True or False) and shape (a tuple of non-negative
// integers), each once, as numpy does; errors give the offset in the
// header.
func parseNPYHeader(h string) (npyHeader, error) {
	p := &pyParser{s: h}
	var out npyHeader
	seen := map[string]bool{}
	p.space()
	if !p.eat('{') {
		return out, p.errorf("expected '{'")
	}
	for {
		p.space()
		if p.eat('}') {
			break
		}
		at := p.i
		key, err := p.str()
		if err != nil {
			return out, err
		}
		if seen[key] {
			return out, fmt.Errorf("offset %d: key %q repeated", at, key)
		}
		seen[key] = true
		p.space()
		if !p.eat(':') {
			return out, p.errorf("expected ':' after the key %q", key)
		}
		p.space()
		switch key {
		case "descr":
			out.descr, err = p.str()
		case "fortran_order":
			out.fortran, err = p.boolean()
		case "shape":
			out.shape, err = p.intTuple()
		default:
			return out, fmt.Errorf("offset %d: unexpected key %q (a .npy header has exactly descr, fortran_order and shape)", at, key)
		}
		if err != nil {
			return out, fmt.Errorf("%s: %w", key, err)
		}
		p.space()
		if p.eat('}') {
			break
		}
		if !p.eat(',') {
			return out, p.errorf("expected ',' or '}' after the value of %q", key)
		}
	}
	p.space()
	if p.i != len(p.s) {
		return out, p.errorf("unexpected text after the dictionary")
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return out, fmt.Errorf("missing key %q", k)
		}
	}
	return out, nil
}

// pyParser reads the Python literals of a .npy header.
type pyParser struct {
	s string
	i int
}

func (p *pyParser) errorf(format string, args ...any) error {
	return fmt.Errorf("offset %d: %s", p.i, fmt.Sprintf(format, args...))
}

func (p *pyParser) space() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

// eat consumes c if it is next.
func (p *pyParser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a quoted string ('…' or "…"); a backslash escapes the next
// character (the headers numpy writes contain none).
func (p *pyParser) str() (string, error) {
	if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		return "", p.errorf("expected a quoted string")
	}
	quote := p.s[p.i]
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == quote:
			return b.String(), nil
		case c == '\\' && p.i < len(p.s):
			b.WriteByte(p.s[p.i])
			p.i++
		default:
			b.WriteByte(c)
		}
	}
	return "", p.errorf("unterminated string")
}

func (p *pyParser) boolean() (bool, error) {
	for _, w := range []string{"True", "False"} {
		if strings.HasPrefix(p.s[p.i:], w) {
			p.i += len(w)
			return w == "True", nil
		}
	}
	return false, p.errorf("expected True or False")
}

// intTuple reads a tuple of non-negative integers: (), (3,), (3, 4).
// Python 2's long suffix L is accepted, as numpy accepts it.
func (p *pyParser) intTuple() ([]int, error) {
	if !p.eat('(') {
		return nil, p.errorf("expected a tuple")
	}
	var out []int
	for {
		p.space()
		if p.eat(')') {
			return out, nil
		}
		start := p.i
		for p.i < len(p.s) && '0' <= p.s[p.i] && p.s[p.i] <= '9' {
			p.i++
		}
		d, err := strconv.Atoi(p.s[start:p.i])
		if err != nil {
			p.i = start
			return nil, p.errorf("expected a non-negative integer")
		}
		p.eat('L')
		out = append(out, d)
		p.space()
		if p.eat(')') {
			return out, nil
		}
		if !p.eat(',') {
			return nil, p.errorf("expected ',' or ')' in the tuple")
		}
	}
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
// 1.0), readable by numpy.load. The file is written atomically (a synced
// temporary file renamed over path).
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
	if err := atomicfile.WriteBytes(path, buf); err != nil {
		return fmt.Errorf("data: writing %s: %w", path, err)
	}
	return nil
}
