package main

import (
	"image"
	"image/color"
	"math"
)

// drawLogo draws the Harmonium logo at size×size pixels: a restricted
// Boltzmann machine — three hidden units above four visible units, every
// hidden unit joined to every visible one and no unit to its own layer —
// in white on a rounded square of Go blue. Edges are antialiased by 4×4
// supersampling.
func drawLogo(size int) *image.NRGBA {
	type pt struct{ x, y float64 }
	// Geometry in a unit square.
	hidden := []pt{{0.30, 0.28}, {0.50, 0.28}, {0.70, 0.28}}
	visible := []pt{{0.20, 0.72}, {0.40, 0.72}, {0.60, 0.72}, {0.80, 0.72}}
	const (
		corner = 0.20  // rounded-square corner radius
		radius = 0.085 // unit radius
		edge   = 0.013 // half-width of a connection
	)
	blue := [4]float64{0x00, 0xAD, 0xD8, 0xFF}
	white := [4]float64{0xFF, 0xFF, 0xFF, 0xFF}
	dark := [4]float64{0x1F, 0x4E, 0x79, 0xFF}
	inRoundedSquare := func(x, y float64) bool {
		cx := math.Max(corner, math.Min(1-corner, x))
		cy := math.Max(corner, math.Min(1-corner, y))
		return math.Hypot(x-cx, y-cy) <= corner
	}
	segDist := func(p, a, b pt) float64 {
		dx, dy := b.x-a.x, b.y-a.y
		t := math.Max(0, math.Min(1, ((p.x-a.x)*dx+(p.y-a.y)*dy)/(dx*dx+dy*dy)))
		return math.Hypot(p.x-a.x-t*dx, p.y-a.y-t*dy)
	}
	colourAt := func(p pt) [4]float64 {
		if !inRoundedSquare(p.x, p.y) {
			return [4]float64{}
		}
		for _, u := range append(append([]pt{}, hidden...), visible...) {
			if d := math.Hypot(p.x-u.x, p.y-u.y); d <= radius {
				if d >= radius-0.03 || u.y > 0.5 {
					return white // visible units filled, hidden units as rings
				}
				return dark
			}
		}
		for _, h := range hidden {
			for _, v := range visible {
				if segDist(p, h, v) <= edge {
					return white
				}
			}
		}
		return blue
	}
	const ss = 4
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	for y := 0; y < size; y++ {
		for x := 0; x < size; x++ {
			var sum [4]float64 // premultiplied
			for j := 0; j < ss; j++ {
				for i := 0; i < ss; i++ {
					c := colourAt(pt{(float64(x) + (float64(i)+0.5)/ss) / float64(size),
						(float64(y) + (float64(j)+0.5)/ss) / float64(size)})
					a := c[3] / 255
					sum[0] += c[0] * a
					sum[1] += c[1] * a
					sum[2] += c[2] * a
					sum[3] += c[3]
				}
			}
			n := float64(ss * ss)
			alpha := sum[3] / n
			if alpha == 0 {
				continue
			}
			un := 255 / alpha / n // un-premultiply
			img.SetNRGBA(x, y, color.NRGBA{uint8(math.Round(sum[0] * un)), uint8(math.Round(sum[1] * un)),
				uint8(math.Round(sum[2] * un)), uint8(math.Round(alpha))})
		}
	}
	return img
}
