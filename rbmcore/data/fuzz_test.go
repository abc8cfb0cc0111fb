package data

import (
	"bytes"
	"compress/gzip"
	"testing"
)

// idxSeeds are small valid IDX files of every type, and hostile headers.
func idxSeeds() [][]byte {
	seeds := [][]byte{
		idxBytes(3, 2, 2, func(i, k int) byte { return byte(40*i + 30*k) }),
		idxHeaderBytes(65536, 512, 512),
		idxHeaderBytes(32768, 256, 256),
		append(idxHeaderBytes(4), 1, 2, 3, 4),
	}
	for _, typ := range []byte{0x09, 0x0B, 0x0C, 0x0D, 0x0E} {
		b := []byte{0, 0, typ, 2, 0, 0, 0, 2, 0, 0, 0, 1}
		seeds = append(seeds, append(b, bytes.Repeat([]byte{0x3f, 0x80}, 8)...))
	}
	return seeds
}

// fuzzIDX loads data as an IDX data set and as a label file, through the
// decompressing path when data is gzip: never a panic, and what loads holds
// no more values than the decompressed payload has bytes.
func fuzzIDX(t *testing.T, data []byte, payload int) {
	for _, opts := range []IDXOptions{{}, {Binarize: true, Threshold: 1, Limit: 2}} {
		s, err := newIDXStream(bytes.NewReader(data), int64(len(data)), "fuzz.idx")
		if err != nil {
			continue
		}
		if set, err := readIDX(s, opts); err == nil && set.Len()*set.Width() > payload {
			t.Fatalf("%d values from %d bytes", set.Len()*set.Width(), payload)
		}
	}
	if s, err := newIDXStream(bytes.NewReader(data), int64(len(data)), "fuzz.idx"); err == nil {
		if labels, err := readIDXLabels(s); err == nil && len(labels) > payload {
			t.Fatalf("%d labels from %d bytes", len(labels), payload)
		}
	}
}

// FuzzIDX: uncompressed IDX files.
func FuzzIDX(f *testing.F) {
	for _, s := range idxSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzIDX(t, data, len(data))
	})
}

// FuzzIDXGzip: the same content through gzip, so that the incremental
// reading of compressed files meets every header the fuzzer makes (the
// compressed stream itself is the standard library's).
func FuzzIDXGzip(f *testing.F) {
	for _, s := range idxSeeds() {
		f.Add(s)
	}
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.HuffmanOnly) // cheap, and a real compressed stream
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// The fuzz function runs sequentially in each worker process, so the
		// writer (whose allocation would dominate the run time) is reused.
		b.Reset()
		zw.Reset(&b)
		zw.Write(data)
		zw.Close()
		fuzzIDX(t, b.Bytes(), len(data))
	})
}

// FuzzNPY: never a panic; what loads has exactly the values the data
// bytes hold.
func FuzzNPY(f *testing.F) {
	f.Add(npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 1), }", f64s(3.25, -1)))
	f.Add(npyFile("{'descr': '>i4', 'fortran_order': True, 'shape': (1, 2), }", []byte{0, 0, 0, 1, 255, 255, 255, 255}))
	f.Add(npyFile(`{"shape": (2,), "fortran_order": False, "descr": "|u1"}`, []byte{0, 1}))
	f.Add(npyFile(`{'x': "'descr': '<i8'", 'descr': '<f8', 'fortran_order': False, 'shape': (1,), }`, f64s(3.25)))
	f.Add(npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", nil))
	f.Add([]byte("\x93NUMPY\x02\x00\x10\x00\x00\x00{'shape': (0,)}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := readNPY(data, "fuzz.npy")
		if err == nil && set.Len()*set.Width() > len(data) {
			t.Fatalf("%d values from %d bytes", set.Len()*set.Width(), len(data))
		}
	})
}

// FuzzAlignment: FASTA and A2M, with and without a replacement for unknown
// characters: never a panic; what loads is a rectangular alignment of
// states of the alphabet, whose one-hot set is valid.
func FuzzAlignment(f *testing.F) {
	f.Add([]byte(">s1 first\nACDE\nFG\n>s2\nacde-.\n>s3\nAXDEFG\n"))
	f.Add([]byte(">a\nAcC.D-\n>b\nA.CDd-\n"))
	f.Add([]byte("; comment\n# another\n>a\r\nAC\r\n\r\n>b\nA C\n"))
	f.Add([]byte(">a\n>b\nAC\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, opts := range []AlignmentOptions{{}, {A2M: true, Unknown: '-'}, {Alphabet: "01", Unknown: '0'}} {
			code, err := newAlignmentCode(opts)
			if err != nil {
				t.Fatal(err)
			}
			a, err := readAlignment(bytes.NewReader(data), "fuzz.fasta", code)
			if err != nil {
				continue
			}
			if len(a.Seqs) != len(a.Names) || len(a.Seqs) == 0 {
				t.Fatalf("%d sequences, %d names", len(a.Seqs), len(a.Names))
			}
			for _, s := range a.Seqs {
				if len(s) != len(a.Seqs[0]) || len(s) == 0 {
					t.Fatalf("ragged alignment: lengths %d and %d", len(s), len(a.Seqs[0]))
				}
				for _, c := range s {
					if int(c) >= a.Q() {
						t.Fatalf("state %d of a %d-letter alphabet", c, a.Q())
					}
				}
			}
			if err := a.Set().Validate(); err != nil {
				t.Fatal(err)
			}
		}
	})
}
