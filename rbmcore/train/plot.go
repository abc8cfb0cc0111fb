package train

import (
	"fmt"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
)

// Plot returns a line plot of the named columns (see Columns) against the
// epoch (the update for "update_pl"), one line per column with a legend.
func (h *History) Plot(names ...string) (*plot.Plot, error) {
	if len(names) == 0 {
		names = []string{"pl"}
	}
	p := plot.New()
	p.X.Label.Text = "epoch"
	if len(names) == 1 && names[0] == "update_pl" {
		p.X.Label.Text = "update"
	}
	p.Y.Label.Text = strings.Join(names, ", ")
	var args []any
	for _, n := range names {
		x, y, err := h.Column(n)
		if err != nil {
			return nil, err
		}
		xy := make(plotter.XYs, len(x))
		for k := range x {
			xy[k].X, xy[k].Y = x[k], y[k]
		}
		args = append(args, n, xy)
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return nil, fmt.Errorf("train: plotting %v: %w", names, err)
	}
	p.Legend.Top = true
	return p, nil
}
