//go:build amd64 && !purego

package mathx

import (
	"os"
	"strings"
	"testing"
)

// sigmoidAddPaths returns the scalar loop and, if the CPU has AVX2, the
// assembly, each selected through useAVX2.
func sigmoidAddPaths() []sigmoidAddPath {
	set := func(v bool) func() func() {
		return func() func() {
			old := useAVX2
			useAVX2 = v
			return func() { useAVX2 = old }
		}
	}
	paths := []sigmoidAddPath{{"scalar", set(false)}}
	if AVX2 {
		paths = append(paths, sigmoidAddPath{"avx2", set(true)})
	}
	return paths
}

// TestAVX2Detection checks the detection (golang.org/x/sys/cpu) against the flags the
// Linux kernel reports in /proc/cpuinfo (which lists avx2 only when the
// CPU has it and the kernel saves the YMM state), and that the assembly
// really runs: it must do every group of four of in-range arguments.
func TestAVX2Detection(t *testing.T) {
	t.Logf("AVX2 detected: %v; SigmoidAdd uses the %s", useAVX2, map[bool]string{true: "AVX2 assembly", false: "scalar loop"}[useAVX2])
	if useAVX2 != AVX2 {
		t.Fatalf("useAVX2 = %v, AVX2 = %v", useAVX2, AVX2)
	}
	info, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Logf("no /proc/cpuinfo to check the detection against: %v", err)
	} else {
		var flags []string
		for _, line := range strings.Split(string(info), "\n") {
			if name, value, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "flags" {
				flags = strings.Fields(value)
				break
			}
		}
		avx2 := false
		for _, f := range flags {
			avx2 = avx2 || f == "avx2"
		}
		if len(flags) > 0 && avx2 != useAVX2 {
			t.Fatalf("/proc/cpuinfo lists avx2: %v, but useAVX2 = %v", avx2, useAVX2)
		}
	}
	if !useAVX2 {
		return
	}
	x := []float64{-3, 0.5, 12, -40, 7, 1e-3, 2, -0.25, 700, -700, 3}
	th := []float64{1, -1, 0.5, 0, 2, -2, 3, 0, 7, -9, 1}
	out := make([]float64, len(x))
	if n := sigmoidAddAVX2(out, x, th); n != 8 {
		t.Fatalf("sigmoidAddAVX2 did %d of %d elements, want 8", n, len(x))
	}
	for i := range 8 {
		if want := Sigmoid(x[i] + th[i]); out[i] != want {
			t.Errorf("sigmoidAddAVX2: out[%d] = %v, want %v", i, out[i], want)
		}
	}
	if out[8] != 0 {
		t.Errorf("sigmoidAddAVX2 wrote out[8] = %v beyond the last full group", out[8])
	}
}
