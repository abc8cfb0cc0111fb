//go:build !amd64 || purego

package mathx

// sigmoidAdd is the scalar loop where there is no assembly version.
func sigmoidAdd(out, x, th []float64) { sigmoidAddGo(out, x, th) }
