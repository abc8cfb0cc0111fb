package lang

import (
	"reflect"

	"github.com/traefik/yaegi/interp"
)

// yaegi passes a value of a type declared in a cell to a compiled interface
// parameter through a wrapper struct generated for that interface (by
// yaegi's extract tool, in stdlib/), found by the interface's package and
// name. An unnamed interface has neither, so yaegi v0.16.1 found no wrapper
// and its compiler crashed ("reflect.Value.Type on zero Value") on
// plotter.NewYErrorBars(struct{ plotter.XYs; plotter.YErrors }{…}), whose
// parameter is interface{ XYer; YErrorer }. The rewriter passes such
// arguments through a helper (unnamedInterfaceArgs) whose parameter is a
// named interface of this package with a wrapper registered for it
// (wrapperExports), so the value reaches the compiled function wrapped.

// unnamedInterfaceArgs maps the compiled functions of the preloaded packages
// that take an unnamed interface (TestUnnamedInterfaces checks the list is
// complete) to the session helper converting their argument.
var unnamedInterfaceArgs = map[string]string{
	"gonum.org/v1/plot/plotter.NewYErrorBars": "XYYErrorer",
	"gonum.org/v1/plot/plotter.NewXErrorBars": "XYXErrorer",
}

// unnamedInterfaceHelpers are the helpers named by unnamedInterfaceArgs.
var unnamedInterfaceHelpers = map[string]reflect.Value{
	"XYYErrorer": reflect.ValueOf(func(v xyYErrorer) xyYErrorer { return v }),
	"XYXErrorer": reflect.ValueOf(func(v xyXErrorer) xyXErrorer { return v }),
}

// wrapperExports registers the wrappers of the helpers' interfaces where
// yaegi looks for them: under this package's path and "_" + the type name.
var wrapperExports = interp.Exports{"github.com/harmonium-rbm/harmonium/lang/lang": {
	"_xyYErrorer": reflect.ValueOf((*xyYErrors)(nil)),
	"_xyXErrorer": reflect.ValueOf((*xyXErrors)(nil)),
}}

// xyYErrorer is interface{ plotter.XYer; plotter.YErrorer }.
type xyYErrorer interface {
	Len() int
	XY(int) (float64, float64)
	YError(int) (float64, float64)
}

// xyXErrorer is interface{ plotter.XYer; plotter.XErrorer }.
type xyXErrorer interface {
	Len() int
	XY(int) (float64, float64)
	XError(int) (float64, float64)
}

// xyYErrors wraps interface{ plotter.XYer; plotter.YErrorer }. As in
// yaegi's generated wrappers, field 0 holds the value and the others, named
// with one prefix letter, the methods.
type xyYErrors struct {
	IValue  any
	WLen    func() int
	WXY     func(int) (float64, float64)
	WYError func(int) (float64, float64)
}

func (w xyYErrors) Len() int                        { return w.WLen() }
func (w xyYErrors) XY(i int) (float64, float64)     { return w.WXY(i) }
func (w xyYErrors) YError(i int) (float64, float64) { return w.WYError(i) }

// xyXErrors wraps interface{ plotter.XYer; plotter.XErrorer }.
type xyXErrors struct {
	IValue  any
	WLen    func() int
	WXY     func(int) (float64, float64)
	WXError func(int) (float64, float64)
}

func (w xyXErrors) Len() int                        { return w.WLen() }
func (w xyXErrors) XY(i int) (float64, float64)     { return w.WXY(i) }
func (w xyXErrors) XError(i int) (float64, float64) { return w.WXError(i) }
