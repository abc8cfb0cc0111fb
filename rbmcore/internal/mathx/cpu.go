package mathx

import "golang.org/x/sys/cpu"

// AVX2 reports whether the CPU has AVX2 and the operating system saves the
// YMM registers, as golang.org/x/sys/cpu detects it once at start-up. The
// AVX2 assembly of this module (SigmoidAdd here, the weight step of train)
// is selected by it, except in builds with the purego tag, which compile
// only the Go reference loops.
var AVX2 = cpu.X86.HasAVX2
