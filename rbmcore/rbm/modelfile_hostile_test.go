package rbm

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/allocs"
)

// hugePottsJSON is a tiny JSON model declaring a Potts layer of 16384 units
// with q = 2^28: 2^42 parameters (32 TiB) that used to be allocated before
// the (empty) theta was read.
const hugePottsJSON = `{"format":"harmonium.rbm","version":1,` +
	`"visible":{"kind":"potts","size":16384,"q":268435456,"theta":[]},` +
	`"hidden":{"kind":"binary","size":1,"theta":[0]},"weights":[]}`

// withCRC appends the CRC-32 of body, as WriteBinary does.
func withCRC(body []byte) []byte {
	return binary.LittleEndian.AppendUint32(body, crc32.ChecksumIEEE(body))
}

// hugePottsBinary is a .hrbm file of about a hundred bytes with a valid
// checksum declaring the same Potts layer.
func hugePottsBinary() []byte {
	b := &binWriter{w: new(bytes.Buffer)}
	buf := b.w.(*bytes.Buffer)
	b.put([]byte(binaryMagic))
	b.u32(fileVersion)
	b.str("potts")
	b.u32(16384)
	b.u32(1 << 28)
	b.u32(1)
	b.str("theta")
	b.u32(0)
	b.str("binary")
	b.u32(1)
	b.u32(1)
	b.u32(1)
	b.str("theta")
	b.floats([]float64{0})
	b.u32(0)
	b.u32(0)
	b.u32(0)
	return withCRC(buf.Bytes())
}

// loadSmall loads the model file content data from a file and checks that
// the loader refused it with an error naming the file and wantInErr,
// allocating less than 16 MiB.
func loadSmall(t *testing.T, name string, data []byte, wantInErr ...string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	n := allocs.Bytes(func() { _, err = Load(path) })
	if err == nil {
		t.Fatalf("%s (%d bytes) was accepted", name, len(data))
	}
	for _, w := range append([]string{path}, wantInErr...) {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q does not mention %q", name, err, w)
		}
	}
	if n > 16<<20 {
		t.Errorf("%s: refusing a %d-byte file allocated %d bytes", name, len(data), n)
	}
}

// TestTinyHostileModelFiles: a model file of a hundred bytes declaring
// gigantic layers is refused before anything of the declared size is
// allocated (it used to kill the process: fatal out of memory).
func TestTinyHostileModelFiles(t *testing.T) {
	loadSmall(t, "huge.json", []byte(hugePottsJSON), "visible", "size 16384", "268435456")
	bin := hugePottsBinary()
	if len(bin) > 128 {
		t.Fatalf("the hostile .hrbm has %d bytes", len(bin))
	}
	loadSmall(t, "huge.hrbm", bin, "visible", "byte offset")
	// The weights too: two layers that fit, with nv×nh beyond the file.
	zeros := "[" + strings.Repeat("0,", 11) + "0]"
	big := `{"format":"harmonium.rbm","version":1,` +
		`"visible":{"kind":"binary","size":12,"theta":` + zeros + `},` +
		`"hidden":{"kind":"binary","size":12,"theta":` + zeros + `},"weights":[]}`
	loadSmall(t, "wide.json", []byte(big), "weights: 12×12")
}

// TestTrailingDataRefused: a model followed by garbage, or two models in
// one file, is an error naming the file (the first model used to be
// loaded silently).
func TestTrailingDataRefused(t *testing.T) {
	m, err := ReadJSON(strings.NewReader(issueExample))
	if err != nil {
		t.Fatal(err)
	}
	var js, bin bytes.Buffer
	if err := m.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteBinary(&bin); err != nil {
		t.Fatal(err)
	}
	loadSmall(t, "garbage.json", append(bytes.Clone(js.Bytes()), "xyz"...), "after the model")
	loadSmall(t, "brace.json", append(bytes.Clone(js.Bytes()), '}'), "after the model")
	loadSmall(t, "two.json", append(bytes.Clone(js.Bytes()), js.Bytes()...), "after the model", "two models")
	loadSmall(t, "garbage.hrbm", append(bytes.Clone(bin.Bytes()), "xyz"...), "checksum")
	loadSmall(t, "two.hrbm", append(bytes.Clone(bin.Bytes()), bin.Bytes()...), "checksum")
	// Garbage inside the checksum is named by offset.
	body := bin.Bytes()[:bin.Len()-4]
	loadSmall(t, "inside.hrbm", withCRC(append(bytes.Clone(body), 1, 2, 3)), "unexpected bytes after the weights")
	// Trailing white space is fine.
	path := filepath.Join(t.TempDir(), "m.json")
	if err := os.WriteFile(path, append(js.Bytes(), " \n\t\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err != nil {
		t.Fatal(err)
	}
}

// TestSaveRemovesStaleTemps: the temporary file a Save killed mid-write
// leaves behind is removed by the next Save of the same path.
func TestSaveRemovesStaleTemps(t *testing.T) {
	m, err := ReadJSON(strings.NewReader(issueExample))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "m.hrbm")
	crashed := filepath.Join(dir, ".m.hrbm.tmp2718281828")
	other := filepath.Join(dir, ".n.hrbm.tmp2718281828")
	for _, p := range []string{crashed, other} {
		if err := os.WriteFile(p, []byte("HRBM\x01\x00"), 0o644); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-time.Hour)
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(crashed); !os.IsNotExist(err) {
		t.Errorf("the crashed Save's temporary file is still there (%v)", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another file's temporary file was removed: %v", err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameModel(m, back); err != nil {
		t.Fatal(err)
	}
}

// fuzzCorpus holds valid model files of every layer kind in both formats,
// plus the hostile ones.
func fuzzCorpus(f *testing.F) [][]byte {
	corpus := [][]byte{[]byte(issueExample), []byte(hugePottsJSON), hugePottsBinary()}
	for _, vis := range []Layer{Binary(2), Spin(2), Potts(2, 3), Gaussian(1)} {
		for _, hid := range []Layer{ReLU(2), DReLU(1), Poisson(1), Potts(1, 2)} {
			m := New(vis, hid, Seed(1))
			var js, bin bytes.Buffer
			if err := m.WriteJSON(&js); err != nil {
				f.Fatal(err)
			}
			if err := m.WriteBinary(&bin); err != nil {
				f.Fatal(err)
			}
			corpus = append(corpus, js.Bytes(), bin.Bytes())
		}
	}
	return corpus
}

// checkAccepted: whatever a reader accepts is a valid model of at most as
// many values as the file has bytes, and it survives both writers.
func checkAccepted(t *testing.T, m *RBM, size int) {
	if err := m.Validate(); err != nil {
		t.Fatalf("accepted an invalid model: %v", err)
	}
	nv, nh := Width(m.Visible), Width(m.Hidden)
	if nv*nh > size || nv > size || nh > size {
		t.Fatalf("a %d-byte file gave a %d×%d model", size, nv, nh)
	}
	for _, write := range []func(*RBM, *bytes.Buffer) (*RBM, error){
		func(m *RBM, b *bytes.Buffer) (*RBM, error) { m.WriteJSON(b); return ReadJSON(b) },
		func(m *RBM, b *bytes.Buffer) (*RBM, error) { m.WriteBinary(b); return ReadBinary(b) },
	} {
		back, err := write(m, new(bytes.Buffer))
		if err != nil {
			t.Fatalf("re-reading an accepted model: %v", err)
		}
		if err := sameModel(m, back); err != nil {
			t.Fatalf("round trip of an accepted model: %v", err)
		}
	}
}

// FuzzReadJSON: the JSON reader never panics or allocates beyond the
// file, and what it accepts round-trips.
func FuzzReadJSON(f *testing.F) {
	for _, s := range fuzzCorpus(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if m, err := ReadJSON(bytes.NewReader(data)); err == nil {
			checkAccepted(t, m, len(data))
		}
	})
}

// FuzzReadBinary: as FuzzReadJSON for the binary format; each input is
// also tried with its last four bytes replaced by a valid checksum, so that
// the fuzzer reaches the parser behind the checksum.
func FuzzReadBinary(f *testing.F) {
	for _, s := range fuzzCorpus(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		inputs := [][]byte{data}
		if len(data) >= 4 {
			inputs = append(inputs, withCRC(bytes.Clone(data[:len(data)-4])))
		}
		for _, in := range inputs {
			if m, err := ReadBinary(bytes.NewReader(in)); err == nil {
				checkAccepted(t, m, len(in))
			}
		}
	})
}
