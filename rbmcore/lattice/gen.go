package lattice

// The bundled example alignment: 300 sequences folding in DefaultTarget,
// for tests and examples. The same command with -n 36000 makes the
// alignment of Tubiana, Cocco & Monasson 2019 (see internal/lpgen).
//go:generate go run ./internal/lpgen -n 300 -chains 10 -seed 1 -o testdata/example.fasta
