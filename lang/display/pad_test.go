package display_test

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/harmonium-rbm/harmonium/lang/display"
)

// scatterPlot returns a plot of the points (x[k], y[k]), with the ranges
// plot.Add sets from them.
func scatterPlot(t testing.TB, x, y []float64) *plot.Plot {
	pts := make(plotter.XYs, len(x))
	for k := range x {
		pts[k].X, pts[k].Y = x[k], y[k]
	}
	s, err := plotter.NewScatter(pts)
	if err != nil {
		t.Fatal(err)
	}
	p := plot.New()
	p.Add(s)
	return p
}

func TestPadAxes(t *testing.T) {
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-12*math.Max(1, math.Abs(want)) }
	for _, c := range []struct {
		name                   string
		x, y                   []float64
		logY                   bool
		xMin, xMax, yMin, yMax float64
	}{
		// 5 % of each span on each side.
		{"linear", []float64{0, 10}, []float64{-20, 80}, false, -0.5, 10.5, -25, 85},
		// A zero span gains ±0.5.
		{"zero span", []float64{3, 3}, []float64{7, 7}, false, 2.5, 3.5, 6.5, 7.5},
		// A factor 1.15 on the logarithmic axis, 5 % on the linear one.
		{"log", []float64{1, 3}, []float64{2, 400}, true, 0.9, 3.1, 2 / 1.15, 400 * 1.15},
	} {
		p := scatterPlot(t, c.x, c.y)
		if c.logY {
			p.Y.Scale = plot.LogScale{}
		}
		display.PadAxes(p)
		if !near(p.X.Min, c.xMin) || !near(p.X.Max, c.xMax) || !near(p.Y.Min, c.yMin) || !near(p.Y.Max, c.yMax) {
			t.Errorf("%s: x [%v, %v], y [%v, %v]; want x [%v, %v], y [%v, %v]",
				c.name, p.X.Min, p.X.Max, p.Y.Min, p.Y.Max, c.xMin, c.xMax, c.yMin, c.yMax)
		}
	}
}

func ExamplePadAxes() {
	pts := plotter.XYs{{X: 0, Y: 1}, {X: 20, Y: 3}}
	s, err := plotter.NewScatter(pts)
	if err != nil {
		panic(err)
	}
	p := plot.New()
	p.Add(s) // the ranges are now the data's extremes, [0, 20] and [1, 3]
	display.PadAxes(p)
	fmt.Printf("x [%g, %g], y [%g, %g]\n", p.X.Min, p.X.Max, p.Y.Min, p.Y.Max)
	// Output: x [-1, 21], y [0.9, 3.1]
}
