package data

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// idxBytes builds an unsigned-byte IDX file of shape n×h×w.
func idxBytes(n, h, w int, pix func(i, k int) byte) []byte {
	var b bytes.Buffer
	b.Write([]byte{0, 0, 0x08, 3})
	for _, d := range []int{n, h, w} {
		binary.Write(&b, binary.BigEndian, uint32(d))
	}
	for i := 0; i < n; i++ {
		for k := 0; k < h*w; k++ {
			b.WriteByte(pix(i, k))
		}
	}
	return b.Bytes()
}

func gz(p []byte) []byte {
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	z.Write(p)
	z.Close()
	return b.Bytes()
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err, p)
		}
	}
}

func TestLoadIDX(t *testing.T) {
	pix := func(i, k int) byte { return byte(40*i + 30*k) }
	raw := idxBytes(3, 2, 2, pix) // header 16 bytes + 3 items of 4 bytes
	for _, c := range []struct {
		name string
		data []byte
	}{{"plain.idx", raw}, {"packed.idx.gz", gz(raw)}} {
		path := writeFile(t, c.name, c.data)
		set, err := LoadIDX(path, IDXOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if set.Len() != 3 || set.Width() != 4 || set.Kind != KindReal {
			t.Fatalf("%s: %d×%d %s", c.name, set.Len(), set.Width(), set.Kind)
		}
		for i := 0; i < 3; i++ {
			for k := 0; k < 4; k++ {
				if got, want := set.X.At(i, k), float64(pix(i, k))/255; got != want {
					t.Errorf("%s (%d,%d) = %v, want %v", c.name, i, k, got, want)
				}
			}
		}
		bin, err := LoadIDX(path, IDXOptions{Binarize: true, Threshold: 90, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if bin.Len() != 2 || bin.Kind != KindBinary {
			t.Fatalf("Limit 2: %d rows of kind %s", bin.Len(), bin.Kind)
		}
		for i := 0; i < 2; i++ {
			for k := 0; k < 4; k++ {
				want := 0.0
				if pix(i, k) >= 90 {
					want = 1
				}
				if bin.X.At(i, k) != want {
					t.Errorf("binarised (%d,%d) = %v, want %v", i, k, bin.X.At(i, k), want)
				}
			}
		}
	}
	// Truncated in the middle of item 2: the offset of the end of data is 16+8+1.
	_, err := LoadIDX(writeFile(t, "short.idx", raw[:25]), IDXOptions{})
	wantErr(t, err, "short.idx", "truncated at byte offset 25", "item 2")
	_, err = LoadIDX(writeFile(t, "short.idx.gz", gz(raw[:25])), IDXOptions{})
	wantErr(t, err, "short.idx.gz", "decompressed byte offset 25")
	_, err = LoadIDX(writeFile(t, "hdr.idx", raw[:10]), IDXOptions{})
	wantErr(t, err, "truncated at byte offset 10", "dimensions")
	bad := append([]byte{}, raw...)
	bad[2] = 0x42
	_, err = LoadIDX(writeFile(t, "type.idx", bad), IDXOptions{})
	wantErr(t, err, "type.idx", "byte offset 2")
	_, err = LoadIDX(writeFile(t, "long.idx", append(append([]byte{}, raw...), 7)), IDXOptions{})
	wantErr(t, err, "after the end", "byte offset 28")
	// A corrupted gzip stream (flipped payload byte) fails its checksum.
	g := gz(raw)
	g[len(g)-10] ^= 0xff
	_, err = LoadIDX(writeFile(t, "crc.idx.gz", g), IDXOptions{})
	wantErr(t, err, "crc.idx.gz")
}

func TestNPYRoundTripAndErrors(t *testing.T) {
	x := mat.NewDense(2, 3, []float64{1, -2.5, 3, 0, 1e-300, -7})
	path := filepath.Join(t.TempDir(), "x.npy")
	if err := SaveNPY(path, x); err != nil {
		t.Fatal(err)
	}
	set, err := LoadNPY(path)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(set.X, x) || set.Kind != KindReal {
		t.Errorf("round trip: got %v (%s)", mat.Formatted(set.X), set.Kind)
	}
	raw, _ := os.ReadFile(path)
	if len(raw)%16 != 0 || (len(raw)-48)%64 != 0 {
		t.Errorf("file length %d: header not 64-byte aligned", len(raw))
	}
	_, err = LoadNPY(writeFile(t, "cut.npy", raw[:len(raw)-5]))
	wantErr(t, err, "cut.npy", "truncated at byte offset")

	// A hand-written Fortran-order big-endian int32 2×2 ±1 array.
	hdr := "{'descr': '>i4', 'fortran_order': True, 'shape': (2, 2), }\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(hdr)))
	b.WriteString(hdr)
	for _, v := range []int32{1, -1, -1, 1} { // column-major
		binary.Write(&b, binary.BigEndian, v)
	}
	set, err = LoadNPY(writeFile(t, "f.npy", b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if want := mat.NewDense(2, 2, []float64{1, -1, -1, 1}); !mat.Equal(set.X, want) || set.Kind != KindSpin {
		t.Errorf("Fortran int32: %v kind %s", mat.Formatted(set.X), set.Kind)
	}
	_, err = LoadNPY(writeFile(t, "magic.npy", []byte("PK\x03\x04 not numpy at all")))
	wantErr(t, err, "magic.npy", "byte offset 0")
	bad := bytes.Replace(b.Bytes(), []byte(">i4"), []byte(">c8"), 1)
	_, err = LoadNPY(writeFile(t, "dtype.npy", bad))
	wantErr(t, err, "dtype.npy", "unsupported dtype")
}

func TestLoadText(t *testing.T) {
	set, err := LoadText(writeFile(t, "m.csv", []byte("# spins\n1,-1,1\n-1 -1 1\n\n1;1;-1\n")))
	if err != nil {
		t.Fatal(err)
	}
	if set.Len() != 3 || set.Kind != KindSpin || set.X.At(1, 0) != -1 || set.X.At(2, 2) != -1 {
		t.Errorf("got %v kind %s", mat.Formatted(set.X), set.Kind)
	}
	set, err = LoadText(writeFile(t, "b.txt", []byte("0 1\n1 1\n")))
	if err != nil || set.Kind != KindBinary {
		t.Errorf("0/1 file: kind %v err %v", set, err)
	}
	_, err = LoadText(writeFile(t, "bad.csv", []byte("1,0\n0,x1\n")))
	wantErr(t, err, "bad.csv:2", "column 2", "x1")
	_, err = LoadText(writeFile(t, "ragged.csv", []byte("1,0\n0,1\n1\n")))
	wantErr(t, err, "ragged.csv:3", "1 values")
}

func TestLoadAlignment(t *testing.T) {
	fa := ">s1 first\nACDE\nFG\n>s2\nacde-.\n>s3\nAXDEFG\n"
	a, err := LoadAlignment(writeFile(t, "a.fasta", []byte(fa)), AlignmentOptions{Unknown: '-'})
	if err != nil {
		t.Fatal(err)
	}
	if a.Len() != 3 || len(a.Seqs[0]) != 6 || a.Names[0] != "s1 first" || a.Q() != 21 {
		t.Fatalf("parsed %d seqs of length %d, names %q", a.Len(), len(a.Seqs[0]), a.Names)
	}
	if a.Seqs[1][4] != 20 || a.Seqs[1][5] != 20 || a.Seqs[2][1] != 20 || a.Seqs[0][1] != 1 {
		t.Errorf("codes %v", a.Seqs)
	}
	set := a.Set()
	if err := set.Validate(); err != nil || set.Width() != 6*21 || set.X.At(0, 1*21+1) != 1 {
		t.Errorf("one-hot set: %v", err)
	}
	_, err = LoadAlignment(writeFile(t, "x.fasta", []byte(fa)), AlignmentOptions{})
	wantErr(t, err, "x.fasta:7:2", "'X'")
	_, err = LoadAlignment(writeFile(t, "len.fasta", []byte(">a\nAC\n>b\nACD\n")), AlignmentOptions{})
	wantErr(t, err, "len.fasta:3", "length 3")
	// A2M: lower case and '.' are insertions and are dropped.
	a, err = LoadAlignment(writeFile(t, "a.a2m", []byte(">a\nAcC.D-\n>b\nA.CDd-\n")), AlignmentOptions{A2M: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Seqs[0]) != 4 || a.Seqs[0][1] != 1 || a.Seqs[1][3] != 20 {
		t.Errorf("A2M codes %v", a.Seqs)
	}
}

func TestIdentityWeights(t *testing.T) {
	a := &Alignment{Alphabet: "AC", Seqs: [][]uint8{{0, 0, 0, 0}, {0, 0, 0, 1}, {1, 1, 1, 1}, {0, 0, 1, 1}}}
	w, err := a.IdentityWeights(context.Background(), 0.75)
	if err != nil {
		t.Fatal(err)
	}
	// Identities: (0,1) 3/4, (0,3) 2/4, (1,3) 3/4, (2,3) 2/4 ⇒ neighbours 0:{0,1} 1:{1,0,3} 2:{2} 3:{3,1}.
	want := []float64{0.5, 1.0 / 3, 1, 0.5}
	for i := range want {
		if math.Abs(w[i]-want[i]) > 1e-15 {
			t.Errorf("weight %d = %v, want %v", i, w[i], want[i])
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.IdentityWeights(ctx, 0.8); err == nil {
		t.Error("cancelled context not reported")
	}
}

func TestMinibatchesAndSplit(t *testing.T) {
	x := mat.NewDense(10, 1, []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	set, err := NewSet(x, KindReal, 1)
	if err != nil {
		t.Fatal(err)
	}
	it, err := set.Minibatches(4, BatchOptions{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	var orders [2][]float64
	for epoch := 0; epoch < 2; epoch++ {
		seen := make([]int, 10)
		batches := 0
		for it.Next() {
			batches++
			b := it.Batch()
			for r := 0; r < b.RawMatrix().Rows; r++ {
				seen[int(b.At(r, 0))]++
				orders[epoch] = append(orders[epoch], b.At(r, 0))
			}
		}
		if batches != 3 || it.BatchesPerEpoch() != 3 {
			t.Errorf("%d batches, want 3", batches)
		}
		for i, c := range seen {
			if c != 1 {
				t.Errorf("epoch %d: row %d seen %d times", epoch, i, c)
			}
		}
		it.Reset()
	}
	same := true
	for i := range orders[0] {
		same = same && orders[0][i] == orders[1][i]
	}
	if same {
		t.Error("the two epochs used the same order: no reshuffle")
	}
	inOrder, err := set.Minibatches(4, BatchOptions{InOrder: true})
	if err != nil {
		t.Fatal(err)
	}
	for want := 0.0; inOrder.Next(); {
		b := inOrder.Batch()
		for r := 0; r < b.RawMatrix().Rows; r++ {
			if b.At(r, 0) != want {
				t.Fatalf("InOrder: row %v where %v was due", b.At(r, 0), want)
			}
			want++
		}
	}
	train, test, err := set.Split(0.3, 1)
	if err != nil {
		t.Fatal(err)
	}
	if train.Len() != 7 || test.Len() != 3 {
		t.Fatalf("split %d/%d, want 7/3", train.Len(), test.Len())
	}
	all := map[float64]bool{}
	for _, s := range []*Set{train, test} {
		for r := 0; r < s.Len(); r++ {
			all[s.X.At(r, 0)] = true
		}
	}
	if len(all) != 10 {
		t.Errorf("train ∪ test has %d distinct rows, want 10", len(all))
	}
	if _, err := NewSet(mat.NewDense(1, 2, []float64{0, 2}), KindBinary, 1); err == nil {
		t.Error("a 2 accepted in a binary set")
	}
	if _, err := NewSet(mat.NewDense(1, 4, []float64{1, 0, 1, 1}), KindPotts, 2); err == nil {
		t.Error("a non-one-hot Potts row accepted")
	}
}
