package train

import "math"

// The plain-SGD weight pass of a block of rows in one sweep (sgdShadow):
// direction, step, divergence scan, gradient norm and float32 shadow. It
// has two implementations that give the same bits: sgdShadowGo, the
// reference, and on amd64 with AVX2 an assembly kernel (sgd_amd64.s). So
// that they can agree, every sum runs in four lanes: element k of a row
// goes to lane k mod 4 (the last, partial group of a row too), and the
// lanes are combined as (l0 + l1) + (l2 + l3). Every product is rounded by
// an explicit float64 conversion before it is added, so that no compiler
// fuses it into an FMA (the Go specification allows that; Go does it on
// arm64 and with GOAMD64=v3), which the assembly does not use either.

// sgdShadow performs the plain-SGD step of the rows of a block of weights:
// w holds the old weights (rows of n values), d the ascent direction. With
// penalties (l2 > 0 or l1 > 0) the direction becomes g = d − (l2·x +
// l1·sign x), else g = d bit for bit (−0 included). It writes the new
// weights x + lr·g over d (w is not written: it is the backup of the
// update), and, when w32 is not nil, their float32 shadow (round to
// nearest) into w32 and the Σ_j |x_new| of every row into absRow (one
// entry per row). It returns the index in w of the first new weight whose
// magnitude is not ≤ lim (NaN included), or −1, and Σ g² (in the lanes of
// the package's fixed order). d and w32 must be as long as w, absRow as
// long as the number of rows, n > 0 and len(w) a multiple of n.
func sgdShadow(w, d []float64, w32 []float32, absRow []float64, n int, lr, l2, l1, lim float64) (int, float64) {
	rows := len(w) / n
	if rows*n != len(w) {
		panic("train: sgdShadow: the block is not a whole number of rows")
	}
	d = d[:len(w)]
	if w32 != nil {
		w32, absRow = w32[:len(w)], absRow[:rows]
	}
	return sgdShadowArch(w, d, w32, absRow, rows, n, lr, l2, l1, lim)
}

// sgdShadowGo is the reference implementation of sgdShadow (arguments
// checked by it) and the fallback where there is no assembly. It makes
// short passes over each row (in the L1 cache), in small functions that
// the compiler keeps in registers: the penalties, if any, into d; the
// step; the scan; the shadow.
func sgdShadowGo(w, d []float64, w32 []float32, absRow []float64, rows, n int, lr, l2, l1, lim float64) (int, float64) {
	first := -1
	var s0, s1, s2, s3 float64 // Σ g² by lane
	for i := range rows {
		x, y := w[i*n:(i+1)*n], d[i*n:(i+1)*n]
		if l2 > 0 || l1 > 0 {
			for k, xk := range x {
				y[k] -= float64(l2*xk) + float64(l1*sign(xk))
			}
		}
		s0, s1, s2, s3 = sgdRow(x, y, lr, s0, s1, s2, s3)
		if first < 0 {
			if k := firstBeyond(y, lim); k >= 0 {
				first = i*n + k
			}
		}
		if w32 != nil {
			absRow[i] = shadowRow(y, w32[i*n:(i+1)*n])
		}
	}
	return first, (s0 + s1) + (s2 + s3)
}

// sgdRow adds the squares of the direction g (a row, in y) to the lane
// sums s0..s3 and writes the new weights x + lr·g over it.
func sgdRow(x, g []float64, lr, s0, s1, s2, s3 float64) (float64, float64, float64, float64) {
	g = g[:len(x)]
	k := 0
	for ; k+4 <= len(x); k += 4 {
		xs, gs := x[k:k+4:k+4], g[k:k+4:k+4]
		s0 += float64(gs[0] * gs[0])
		s1 += float64(gs[1] * gs[1])
		s2 += float64(gs[2] * gs[2])
		s3 += float64(gs[3] * gs[3])
		gs[0], gs[1], gs[2], gs[3] = xs[0]+float64(lr*gs[0]), xs[1]+float64(lr*gs[1]), xs[2]+float64(lr*gs[2]), xs[3]+float64(lr*gs[3])
	}
	// The last, partial group: element k+j in lane j.
	for j, gj := range g[k:] {
		switch j {
		case 0:
			s0 += float64(gj * gj)
		case 1:
			s1 += float64(gj * gj)
		default:
			s2 += float64(gj * gj)
		}
		g[k+j] = x[k+j] + float64(lr*gj)
	}
	return s0, s1, s2, s3
}

// firstBeyond returns the index of the first value of row whose magnitude
// is not ≤ lim (NaN included), or −1.
func firstBeyond(row []float64, lim float64) int {
	for k, v := range row {
		if !(math.Abs(v) <= lim) {
			return k
		}
	}
	return -1
}

// shadowRows writes the float32 shadow of the rows of n weights w into w32
// and the Σ_j |w_ij| of every row i into absRow, as shadowRow. w32 must be
// as long as w, absRow as long as the number of rows, n > 0 and len(w) a
// multiple of n.
func shadowRows(w []float64, w32 []float32, absRow []float64, n int) {
	rows := len(w) / n
	if rows*n != len(w) {
		panic("train: shadowRows: not a whole number of rows")
	}
	shadowRowsArch(w, w32[:len(w)], absRow[:rows], rows, n)
}

// shadowRowsGo is the reference implementation of shadowRows (arguments
// checked by it) and the fallback where there is no assembly.
func shadowRowsGo(w []float64, w32 []float32, absRow []float64, rows, n int) {
	for i := range rows {
		absRow[i] = shadowRow(w[i*n:(i+1)*n], w32[i*n:(i+1)*n])
	}
}

// shadowRow writes the float32 values of row (round to nearest, as Go's
// conversion) into dst and returns Σ |row[k]| in the package's lane order.
// The four lanes also keep the additions from waiting for each other (one
// chain would wait 4 cycles for every addition).
func shadowRow(row []float64, dst []float32) float64 {
	dst = dst[:len(row)]
	var a0, a1, a2, a3 float64
	k := 0
	for ; k+4 <= len(row); k += 4 {
		x := row[k : k+4 : k+4]
		d := dst[k : k+4 : k+4]
		d[0], d[1], d[2], d[3] = float32(x[0]), float32(x[1]), float32(x[2]), float32(x[3])
		a0 += math.Abs(x[0])
		a1 += math.Abs(x[1])
		a2 += math.Abs(x[2])
		a3 += math.Abs(x[3])
	}
	// The last, partial group: element k+j in lane j.
	for j, x := range row[k:] {
		dst[k+j] = float32(x)
		switch j {
		case 0:
			a0 += math.Abs(x)
		case 1:
			a1 += math.Abs(x)
		default:
			a2 += math.Abs(x)
		}
	}
	return (a0 + a1) + (a2 + a3)
}
