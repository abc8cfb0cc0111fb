package rbm

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/atomicfile"
)

// Model files. The JSON format (version 1) is the exchange format:
//
//	{"format": "harmonium.rbm", "version": 1,
//	 "visible": {"kind": "binary", "size": 3, "theta": [0.1, 0.0, -0.2]},
//	 "hidden":  {"kind": "relu", "size": 2, "gamma": [1, 1], "theta": [-0.5, 0.3]},
//	 "weights": [[0.1, 0.2], [0.0, -0.3], [0.5, 0.1]]}
//
// The kind is the name a layer is registered under (RegisterLayer), so a
// model file can hold any registered kind. Layer parameters are keyed by
// ParamNames (theta; gamma, theta; gamma_plus, gamma_minus, theta_plus,
// theta_minus); a layer with colours (Potts) has "q" and its parameters as
// size×q nested arrays, and the weights nest as
// [visible unit][visible colour][hidden unit][hidden colour], the colour
// levels present only for Potts layers (N×M, N×q×M, ...). Numbers are
// written in the shortest form that reads back bit-identically.
//
// The compact binary format (file extension .hrbm) stores the same content:
// "HRBM", uint32 version 1, then for each layer its kind, size, q and named
// parameter arrays, then the weight matrix, all little-endian float64, and
// a CRC-32 (IEEE) of everything before it.
//
// Both readers check every declared size against what the rest of the file
// can hold before allocating (a tiny file cannot make them allocate
// gigabytes), and reject data after the model (e.g. two files
// concatenated).

const (
	fileFormat    = "harmonium.rbm"
	fileVersion   = 1
	binaryMagic   = "HRBM"
	binaryExt     = ".hrbm"
	maxBinaryDims = 1 << 28
)

// Save writes m to path atomically (a temporary file in the same directory,
// synced, renamed over path, the directory synced): the binary format if
// path ends in .hrbm, JSON otherwise. Temporary files of path left behind
// by a Save that crashed are removed.
func (m *RBM) Save(path string) error {
	if err := m.Validate(); err != nil {
		return fmt.Errorf("rbm: save %s: %w", path, err)
	}
	write := m.WriteJSON
	if strings.EqualFold(filepath.Ext(path), binaryExt) {
		write = m.WriteBinary
	}
	if err := atomicfile.Write(path, write); err != nil {
		return fmt.Errorf("rbm: save %s: %w", path, err)
	}
	return nil
}

// Load reads a model file written by Save (or by another tool in the JSON
// format); the format is recognised from the content. Errors name the file
// and the field (e.g. "hidden.gamma[1]") or byte offset at fault.
func Load(path string) (*RBM, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("rbm: load: %w", err)
	}
	var m *RBM
	if bytes.HasPrefix(data, []byte(binaryMagic)) {
		m, err = ReadBinary(bytes.NewReader(data))
	} else {
		m, err = ReadJSON(bytes.NewReader(data))
	}
	if err != nil {
		return nil, fmt.Errorf("rbm: load %s: %w", path, err)
	}
	return m, nil
}

// nest turns flat row-major data into nested []any of the given dims.
func nest(data []float64, dims []int) any {
	if len(dims) == 1 {
		return data[:dims[0]]
	}
	stride := len(data) / dims[0]
	out := make([]any, dims[0])
	for i := range out {
		out[i] = nest(data[i*stride:(i+1)*stride], dims[1:])
	}
	return out
}

// paramDims is the nesting of a layer parameter array.
func paramDims(l Layer) []int {
	if l.States() > 1 {
		return []int{l.Len(), l.States()}
	}
	return []int{l.Len()}
}

// weightDims is the nesting of the weights.
func weightDims(v, h Layer) []int {
	d := []int{v.Len()}
	if v.States() > 1 {
		d = append(d, v.States())
	}
	d = append(d, h.Len())
	if h.States() > 1 {
		d = append(d, h.States())
	}
	return d
}

func layerJSON(l Layer) map[string]any {
	o := map[string]any{"kind": l.Kind(), "size": l.Len()}
	if l.States() > 1 {
		o["q"] = l.States()
	}
	for p, ps := range l.Params() {
		o[l.ParamNames()[p]] = nest(ps, paramDims(l))
	}
	return o
}

// WriteJSON writes m in the JSON model format.
func (m *RBM) WriteJSON(w io.Writer) error {
	wd := m.W.RawMatrix()
	flat := make([]float64, 0, wd.Rows*wd.Cols)
	for i := 0; i < wd.Rows; i++ {
		flat = append(flat, wd.Data[i*wd.Stride:i*wd.Stride+wd.Cols]...)
	}
	doc := map[string]any{
		"format":  fileFormat,
		"version": fileVersion,
		"visible": layerJSON(m.Visible),
		"hidden":  layerJSON(m.Hidden),
		"weights": nest(flat, weightDims(m.Visible, m.Hidden)),
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// unnest reads a nested JSON array of the given dims into out (row-major),
// naming the path of the first mismatch.
func unnest(v any, dims []int, path string, out []float64) ([]float64, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: expected an array of %d, got %s", path, dims[0], jsonType(v))
	}
	if len(arr) != dims[0] {
		return nil, fmt.Errorf("%s: has %d entries, expected %d", path, len(arr), dims[0])
	}
	for i, e := range arr {
		p := fmt.Sprintf("%s[%d]", path, i)
		if len(dims) == 1 {
			x, ok := e.(float64)
			if !ok {
				return nil, fmt.Errorf("%s: expected a number, got %s", p, jsonType(e))
			}
			out = append(out, x)
			continue
		}
		var err error
		if out, err = unnest(e, dims[1:], p, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// jsonError describes a decoding error, with its byte offset for a syntax
// error.
func jsonError(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("invalid JSON at byte offset %d: %w", se.Offset, err)
	}
	return fmt.Errorf("invalid JSON: %w", err)
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case float64:
		return "a number"
	case []any:
		return "an array"
	default:
		return "an object"
	}
}

// intField reads a non-negative integer field of obj.
func intField(obj map[string]any, key, path string) (int, error) {
	v, ok := obj[key]
	if !ok {
		return 0, fmt.Errorf("%s.%s: missing", path, key)
	}
	x, ok := v.(float64)
	if !ok || x != math.Trunc(x) || x < 0 || x > maxBinaryDims {
		return 0, fmt.Errorf("%s.%s: expected a non-negative integer, got %v", path, key, v)
	}
	return int(x), nil
}

// newLayerWithin is NewLayer for the readers: it refuses, before allocating
// them, parameters of more than budget values (what the rest of the file can
// encode). size and q are at most maxBinaryDims, so the count cannot
// overflow.
func newLayerWithin(kind string, size, q, budget int) (Layer, error) {
	empty, err := NewLayer(kind, 0, q)
	if err != nil {
		return nil, err
	}
	if n := len(empty.Params()) * size * empty.States(); n > budget {
		return nil, fmt.Errorf("size %d × %d states × %d parameter arrays = %d values, more than the %d the rest of the file can hold",
			size, empty.States(), len(empty.Params()), n, budget)
	}
	return NewLayer(kind, size, q)
}

// weightsWithin checks that an nv×nh weight matrix fits in budget values.
func weightsWithin(nv, nh, budget int) error {
	if nv > 0 && nh > budget/nv {
		return fmt.Errorf("weights: %d×%d values, more than the %d the rest of the file can hold", nv, nh, budget)
	}
	return nil
}

// readLayerJSON reads a layer object; budget is the number of values the
// document can still hold, and the layer's values are taken from it.
func readLayerJSON(v any, path string, budget *int) (Layer, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: expected an object, got %s", path, jsonType(v))
	}
	kind, ok := obj["kind"].(string)
	if !ok {
		return nil, fmt.Errorf("%s.kind: missing or not a string", path)
	}
	size, err := intField(obj, "size", path)
	if err != nil {
		return nil, err
	}
	q := 0
	lk, _ := lookupKind(kind) // an unknown kind fails in newLayerWithin
	if lk.Colours {
		if q, err = intField(obj, "q", path); err != nil {
			return nil, err
		}
	}
	l, err := newLayerWithin(kind, size, q, *budget)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	*budget -= len(l.Params()) * Width(l)
	known := map[string]bool{"kind": true, "size": true}
	if lk.Colours {
		known["q"] = true
	}
	for p, name := range l.ParamNames() {
		known[name] = true
		raw, ok := obj[name]
		if !ok {
			return nil, fmt.Errorf("%s.%s: missing (a %s layer needs %s)", path, name, kind, strings.Join(l.ParamNames(), ", "))
		}
		vals, err := unnest(raw, paramDims(l), path+"."+name, nil)
		if err != nil {
			return nil, err
		}
		copy(l.Params()[p], vals)
	}
	for k := range obj {
		if !known[k] {
			return nil, fmt.Errorf("%s.%s: unknown field for a %s layer", path, k, kind)
		}
	}
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// ReadJSON reads a model in the JSON format. The model must be the only
// JSON value of r (white space may follow it).
func ReadJSON(r io.Reader) (*RBM, error) {
	dec := json.NewDecoder(r)
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, jsonError(err)
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		if err != nil {
			return nil, fmt.Errorf("unexpected data after the model (which ends at byte offset %d): %w", end, jsonError(err))
		}
		return nil, fmt.Errorf("unexpected data after the model at byte offset %d (two models in one file?)", end)
	}
	// Every number of the document takes at least one character and a
	// separator.
	budget := int(end / 2)
	if f, _ := doc["format"].(string); f != fileFormat {
		return nil, fmt.Errorf("format: expected %q, got %v", fileFormat, doc["format"])
	}
	if v, _ := doc["version"].(float64); v != fileVersion {
		return nil, fmt.Errorf("version: expected %d, got %v", fileVersion, doc["version"])
	}
	for k := range doc {
		switch k {
		case "format", "version", "visible", "hidden", "weights":
		default:
			return nil, fmt.Errorf("%s: unknown top-level field", k)
		}
	}
	vis, err := readLayerJSON(doc["visible"], "visible", &budget)
	if err != nil {
		return nil, err
	}
	hid, err := readLayerJSON(doc["hidden"], "hidden", &budget)
	if err != nil {
		return nil, err
	}
	nv, nh := Width(vis), Width(hid)
	if err := weightsWithin(nv, nh, budget); err != nil {
		return nil, err
	}
	flat, err := unnest(doc["weights"], weightDims(vis, hid), "weights", make([]float64, 0, nv*nh))
	if err != nil {
		return nil, err
	}
	m := &RBM{Visible: vis, Hidden: hid, W: &mat.Dense{}}
	if nv > 0 && nh > 0 {
		m.W = mat.NewDense(nv, nh, flat)
	}
	return m, nil
}

// binWriter accumulates little-endian fields and the running CRC.
type binWriter struct {
	w   io.Writer
	crc uint32
	err error
}

func (b *binWriter) put(p []byte) {
	if b.err != nil {
		return
	}
	b.crc = crc32.Update(b.crc, crc32.IEEETable, p)
	_, b.err = b.w.Write(p)
}

func (b *binWriter) u32(x int) { b.put(binary.LittleEndian.AppendUint32(nil, uint32(x))) }

func (b *binWriter) str(s string) { b.u32(len(s)); b.put([]byte(s)) }

func (b *binWriter) floats(x []float64) {
	b.u32(len(x))
	buf := make([]byte, 0, 8*len(x))
	for _, v := range x {
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
	}
	b.put(buf)
}

// WriteBinary writes m in the compact binary format.
func (m *RBM) WriteBinary(w io.Writer) error {
	b := &binWriter{w: w}
	b.put([]byte(binaryMagic))
	b.u32(fileVersion)
	for _, l := range []Layer{m.Visible, m.Hidden} {
		b.str(l.Kind())
		b.u32(l.Len())
		b.u32(l.States())
		b.u32(len(l.Params()))
		for p, ps := range l.Params() {
			b.str(l.ParamNames()[p])
			b.floats(ps)
		}
	}
	r, c := m.W.Dims()
	if Width(m.Visible) == 0 || Width(m.Hidden) == 0 {
		r, c = 0, 0
	}
	b.u32(r)
	b.u32(c)
	flat := make([]float64, 0, r*c)
	for i := 0; i < r; i++ {
		flat = append(flat, m.W.RawRowView(i)...)
	}
	b.floats(flat)
	if b.err != nil {
		return b.err
	}
	_, err := w.Write(binary.LittleEndian.AppendUint32(nil, b.crc))
	return err
}

// binReader reads the binary format, tracking the offset for errors.
type binReader struct {
	data []byte
	off  int
}

func (b *binReader) need(n int, field string) ([]byte, error) {
	if n < 0 || b.off+n > len(b.data) {
		return nil, fmt.Errorf("%s: truncated at byte offset %d (need %d bytes, %d left)", field, b.off, n, len(b.data)-b.off)
	}
	p := b.data[b.off : b.off+n]
	b.off += n
	return p, nil
}

// left returns the number of bytes not yet read.
func (b *binReader) left() int { return len(b.data) - b.off }

func (b *binReader) u32(field string) (int, error) {
	p, err := b.need(4, field)
	if err != nil {
		return 0, err
	}
	x := binary.LittleEndian.Uint32(p)
	if x > maxBinaryDims {
		return 0, fmt.Errorf("%s: value %d at byte offset %d is implausibly large", field, x, b.off-4)
	}
	return int(x), nil
}

func (b *binReader) str(field string) (string, error) {
	n, err := b.u32(field)
	if err != nil {
		return "", err
	}
	p, err := b.need(n, field)
	return string(p), err
}

func (b *binReader) floats(field string, want int) ([]float64, error) {
	at := b.off
	n, err := b.u32(field)
	if err != nil {
		return nil, err
	}
	if n != want {
		return nil, fmt.Errorf("%s: %d values at byte offset %d, expected %d", field, n, at, want)
	}
	p, err := b.need(8*n, field)
	if err != nil {
		return nil, err
	}
	x := make([]float64, n)
	for i := range x {
		x[i] = math.Float64frombits(binary.LittleEndian.Uint64(p[8*i:]))
	}
	return x, nil
}

// ReadBinary reads a model in the binary format, verifying its checksum.
func ReadBinary(r io.Reader) (*RBM, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if len(data) < len(binaryMagic)+8 || string(data[:4]) != binaryMagic {
		return nil, fmt.Errorf("not a binary model file (missing %q header)", binaryMagic)
	}
	body := data[:len(data)-4]
	if got, want := crc32.ChecksumIEEE(body), binary.LittleEndian.Uint32(data[len(data)-4:]); got != want {
		return nil, fmt.Errorf("checksum mismatch (stored %08x, computed %08x): the file is corrupt", want, got)
	}
	b := &binReader{data: body, off: 4}
	if v, err := b.u32("version"); err != nil {
		return nil, err
	} else if v != fileVersion {
		return nil, fmt.Errorf("version: expected %d, got %d", fileVersion, v)
	}
	var layers [2]Layer
	for k, name := range []string{"visible", "hidden"} {
		kind, err := b.str(name + ".kind")
		if err != nil {
			return nil, err
		}
		size, err := b.u32(name + ".size")
		if err != nil {
			return nil, err
		}
		q, err := b.u32(name + ".q")
		if err != nil {
			return nil, err
		}
		l, err := newLayerWithin(kind, size, q, b.left()/8)
		if err != nil {
			return nil, fmt.Errorf("%s at byte offset %d: %w", name, b.off, err)
		}
		if l.States() != q {
			return nil, fmt.Errorf("%s.q: %d, a %s layer has %d states", name, q, kind, l.States())
		}
		np, err := b.u32(name + ".params")
		if err != nil {
			return nil, err
		}
		if np != len(l.Params()) {
			return nil, fmt.Errorf("%s: %d parameter arrays, a %s layer has %d", name, np, kind, len(l.Params()))
		}
		for p, ps := range l.Params() {
			pn, err := b.str(name + ".param name")
			if err != nil {
				return nil, err
			}
			if pn != l.ParamNames()[p] {
				return nil, fmt.Errorf("%s: parameter %d is %q, expected %q", name, p, pn, l.ParamNames()[p])
			}
			x, err := b.floats(name+"."+pn, len(ps))
			if err != nil {
				return nil, err
			}
			copy(ps, x)
		}
		if err := l.Validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		layers[k] = l
	}
	rows, err := b.u32("weights.rows")
	if err != nil {
		return nil, err
	}
	cols, err := b.u32("weights.cols")
	if err != nil {
		return nil, err
	}
	nv, nh := Width(layers[0]), Width(layers[1])
	if nv == 0 || nh == 0 {
		nv, nh = 0, 0
	}
	if rows != nv || cols != nh {
		return nil, fmt.Errorf("weights: %d×%d, the layers need %d×%d", rows, cols, nv, nh)
	}
	flat, err := b.floats("weights", rows*cols)
	if err != nil {
		return nil, err
	}
	if b.off != len(body) {
		return nil, fmt.Errorf("%d unexpected bytes after the weights at byte offset %d", len(body)-b.off, b.off)
	}
	m := &RBM{Visible: layers[0], Hidden: layers[1], W: &mat.Dense{}}
	if rows > 0 {
		m.W = mat.NewDense(rows, cols, flat)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}
