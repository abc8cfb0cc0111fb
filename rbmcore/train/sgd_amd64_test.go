//go:build amd64 && !purego

package train

import "github.com/harmonium-rbm/harmonium/rbmcore/internal/mathx"

// sgdPaths returns the reference loop and, if the CPU has AVX2, the
// assembly, each selected through useAVX2.
func sgdPaths() []sgdPath {
	set := func(v bool) func() func() {
		return func() func() {
			old := useAVX2
			useAVX2 = v
			return func() { useAVX2 = old }
		}
	}
	paths := []sgdPath{{"go", set(false)}}
	if mathx.AVX2 {
		paths = append(paths, sgdPath{"avx2", set(true)})
	}
	return paths
}
