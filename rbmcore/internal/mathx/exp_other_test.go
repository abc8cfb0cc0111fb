//go:build !amd64 || purego

package mathx

// sigmoidAddPaths returns the only implementation of SigmoidAdd here.
func sigmoidAddPaths() []sigmoidAddPath {
	return []sigmoidAddPath{{"scalar", func() func() { return func() {} }}}
}
