package rbm

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

const issueExample = `{"format": "harmonium.rbm", "version": 1,
 "visible": {"kind": "binary", "size": 3, "theta": [0.1, 0.0, -0.2]},
 "hidden":  {"kind": "relu", "size": 2, "gamma": [1, 1], "theta": [-0.5, 0.3]},
 "weights": [[0.1, 0.2], [0.0, -0.3], [0.5, 0.1]]}`

func sameModel(a, b *RBM) error {
	for k, pair := range [][2]Layer{{a.Visible, b.Visible}, {a.Hidden, b.Hidden}} {
		if pair[0].Kind() != pair[1].Kind() || pair[0].Len() != pair[1].Len() || pair[0].States() != pair[1].States() {
			return fmt.Errorf("layer %d differs: %s vs %s", k, pair[0].Kind(), pair[1].Kind())
		}
		pb := pair[1].Params()
		for p, ps := range pair[0].Params() {
			for i := range ps {
				if math.Float64bits(ps[i]) != math.Float64bits(pb[p][i]) {
					return fmt.Errorf("layer %d %s[%d]: %v vs %v", k, pair[0].ParamNames()[p], i, ps[i], pb[p][i])
				}
			}
		}
	}
	ra, ca := a.W.Dims()
	rb, cb := b.W.Dims()
	if ra != rb || ca != cb {
		return fmt.Errorf("weights %d×%d vs %d×%d", ra, ca, rb, cb)
	}
	for i := 0; i < ra; i++ {
		for j := 0; j < ca; j++ {
			if math.Float64bits(a.W.At(i, j)) != math.Float64bits(b.W.At(i, j)) {
				return fmt.Errorf("weights[%d][%d] differ", i, j)
			}
		}
	}
	return nil
}

// TestSaveLoadRoundTrip: every registered layer kind, both sides, both
// formats, with awkward values, reads back bit-identical.
func TestSaveLoadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	kinds := allKinds()
	for i, vk := range kinds {
		hk := kinds[(i+3)%len(kinds)]
		m := New(makeLayer(vk, 4), makeLayer(hk, 3), Seed(uint64(i)), WeightScale(1))
		randomiseFields(m, uint64(i))
		m.W.Set(0, 0, 1.0/3)
		m.W.Set(1, 0, -5e-324)
		m.W.Set(2, 1, 1.7976931348623157e308)
		for _, ext := range []string{".json", ".hrbm"} {
			path := filepath.Join(dir, vk+"-"+hk+ext)
			if err := m.Save(path); err != nil {
				t.Fatal(err)
			}
			got, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := sameModel(m, got); err != nil {
				t.Errorf("%s: %v", path, err)
			}
		}
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*"))
	if len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

func TestLoadIssueExample(t *testing.T) {
	m, err := ReadJSON(strings.NewReader(issueExample))
	if err != nil {
		t.Fatal(err)
	}
	if m.Hidden.Kind() != "relu" || m.W.At(2, 0) != 0.5 || m.Visible.Params()[0][2] != -0.2 {
		t.Fatalf("wrong content: %v", m)
	}
}

// TestLoadErrorsNameTheField: corrupt or mismatched files give errors that
// name the field (or offset) at fault.
func TestLoadErrorsNameTheField(t *testing.T) {
	cases := []struct{ edit, want string }{
		{`"version": 1` + "|" + `"version": 2`, "version"},
		{`"format": "harmonium.rbm"` + "|" + `"format": "other"`, "format"},
		{`"gamma": [1, 1], ` + "|", "hidden.gamma: missing"},
		{`"gamma": [1, 1]` + "|" + `"gamma": [1, -1]`, "gamma[1]"},
		{`"gamma": [1, 1]` + "|" + `"gamma": [1]`, "hidden.gamma: has 1 entries, expected 2"},
		{`"theta": [0.1, 0.0, -0.2]` + "|" + `"theta": [0.1, "x", -0.2]`, "visible.theta[1]: expected a number"},
		{`[0.0, -0.3]` + "|" + `[0.0]`, "weights[1]: has 1 entries"},
		{`"kind": "relu"` + "|" + `"kind": "sigmoid"`, "unknown layer kind"},
		{`"size": 3` + "|" + `"size": -3`, "visible.size"},
		{`"size": 3,` + "|" + `"size": 3, "thetta": [1],`, "visible.thetta: unknown field"},
		{`[0.5, 0.1]]}` + "|" + `[0.5, 0.1]`, "invalid JSON"},
	}
	for _, c := range cases {
		parts := strings.SplitN(c.edit, "|", 2)
		if !strings.Contains(issueExample, parts[0]) {
			t.Fatalf("bad test edit %q", parts[0])
		}
		doc := strings.Replace(issueExample, parts[0], parts[1], 1)
		_, err := ReadJSON(strings.NewReader(doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("edit %q: error %v, want it to mention %q", c.edit, err, c.want)
		}
	}
	// binary: every single-byte corruption and every truncation is caught
	m, _ := ReadJSON(strings.NewReader(issueExample))
	var buf bytes.Buffer
	if err := m.WriteBinary(&buf); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	for k := range data {
		bad := bytes.Clone(data)
		bad[k] ^= 0x10
		if _, err := ReadBinary(bytes.NewReader(bad)); err == nil {
			t.Fatalf("flipping byte %d went unnoticed", k)
		}
		if _, err := ReadBinary(bytes.NewReader(data[:k])); err == nil {
			t.Fatalf("truncation at %d went unnoticed", k)
		}
	}
	// a load error names the file
	path := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(path, []byte(`{"format": "harmonium.rbm", "version": 1}`), 0o644)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "visible") {
		t.Errorf("Load error %v should name the file and the field", err)
	}
}

// ExampleLoad reads the model of the file-format documentation; the free
// energy F(v) = -θ·v - Σ_µ Γ_µ(vW) of v = 101 was checked with scipy quadrature.
func ExampleLoad() {
	dir, _ := os.MkdirTemp("", "rbm")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.json")
	os.WriteFile(path, []byte(`{"format": "harmonium.rbm", "version": 1,
 "visible": {"kind": "binary", "size": 3, "theta": [0.1, 0.0, -0.2]},
 "hidden":  {"kind": "relu", "size": 2, "gamma": [1, 1], "theta": [-0.5, 0.3]},
 "weights": [[0.1, 0.2], [0.0, -0.3], [0.5, 0.1]]}`), 0o644)
	m, err := Load(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m)
	v := mat.NewDense(1, 3, []float64{1, 0, 1})
	fmt.Printf("F(101) = %.6f\n", m.FreeEnergy(v)[0])
	// Output:
	// RBM binary(3) × relu(2)
	// F(101) = -0.985818
}
