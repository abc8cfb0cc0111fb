//go:build !amd64 || purego

package train

// sgdShadowArch is the reference loop where there is no assembly version.
func sgdShadowArch(w, d []float64, w32 []float32, absRow []float64, rows, n int, lr, l2, l1, lim float64) (int, float64) {
	return sgdShadowGo(w, d, w32, absRow, rows, n, lr, l2, l1, lim)
}

// shadowRowsArch is the reference loop where there is no assembly version.
func shadowRowsArch(w []float64, w32 []float32, absRow []float64, rows, n int) {
	shadowRowsGo(w, w32, absRow, rows, n)
}
