package lang

import (
	"embed"
	"fmt"
	"io"
	"log"
	"math"
	"os/exec"
	"reflect"
	"slices"
	"sort"

	"github.com/traefik/yaegi/interp"
)

// More of the Go standard library than yaegi v0.16.1 gives by default:
//
//   - The generic packages slices, maps and cmp: yaegi compiles them from
//     its own copy of their Go 1.22 source, but its type inference fails on
//     the constraint S ~[]E ("undefined type for E") and it leaves out
//     Sort, Min, Max, BinarySearch and the iterator functions. gosrc/ adds
//     and redefines them with []E and map[K]V parameters, as interpreted
//     generic functions, so they work for every element type, those declared
//     in cells included; Sort of the basic element types runs compiled.
//   - iter (Seq, Seq2, Pull, Pull2), which yaegi lacks.
//   - os/exec, which yaegi keeps in its "unrestricted" tables.
//   - log.Logger with all its methods (yaegi's restricted log.New returns a
//     wrapper without SetPrefix, SetFlags, SetOutput, Writer).
//
// Deliberately left out, as yaegi's restricted tables do: os.Exit (it would
// end the kernel; it panics with "os.Exit(code)" instead), os.FindProcess of
// the kernel itself, syscall.Exec, Exit, ForkExec, Kill, Reboot and the raw
// Syscall functions, and unsafe (a cell could corrupt the kernel's memory).

//go:embed gosrc/*.go.txt
var goSources embed.FS

// goSourceFiles are the packages of gosrc/.
var goSourceFiles = []string{"iter", "slices", "maps"}

// gostdPath is the import path of the compiled helpers gosrc/ calls.
const gostdPath = "github.com/harmonium-rbm/harmonium/lang/gostd"

// loadGoExtras adds the tables and sources above to the session's
// interpreter; reset calls it after the standard library tables are in.
func (s *Session) loadGoExtras() error {
	extra := interp.Exports{
		"os/exec/exec": {
			"Command":        reflect.ValueOf(exec.Command),
			"CommandContext": reflect.ValueOf(exec.CommandContext),
			"ErrDot":         reflect.ValueOf(&exec.ErrDot).Elem(),
			"ErrNotFound":    reflect.ValueOf(&exec.ErrNotFound).Elem(),
			"ErrWaitDelay":   reflect.ValueOf(&exec.ErrWaitDelay).Elem(),
			"LookPath":       reflect.ValueOf(exec.LookPath),
			"Cmd":            reflect.ValueOf((*exec.Cmd)(nil)),
			"Error":          reflect.ValueOf((*exec.Error)(nil)),
			"ExitError":      reflect.ValueOf((*exec.ExitError)(nil)),
		},
		"log/log": {
			"New":    reflect.ValueOf(newLogger),
			"Logger": reflect.ValueOf((*cellLogger)(nil)),
		},
		gostdPath + "/gostd": {
			"SortOrdered": reflect.ValueOf(sortOrdered),
		},
	}
	if err := s.in.Use(extra); err != nil {
		return fmt.Errorf("loading os/exec, log and iter: %w", err)
	}
	// iter is a source package only: a (even empty) table of compiled
	// symbols would hide it.
	s.exports["iter"], s.names["iter"] = map[string]reflect.Value{}, "iter"
	s.exports["os/exec"], s.names["os/exec"] = extra["os/exec/exec"], "exec"
	for _, name := range goSourceFiles {
		src, err := goSources.ReadFile("gosrc/" + name + ".go.txt")
		if err != nil {
			return fmt.Errorf("reading the source of package %s: %w", name, err)
		}
		if _, err := s.in.Compile(string(src)); err != nil {
			return fmt.Errorf("compiling package %s (lang/gosrc/%s.go.txt): %w", name, name, err)
		}
	}
	if _, err := s.in.Eval(inCell(goPreamble)); err != nil {
		return fmt.Errorf("evaluating the helpers of the Go rewrites: %w", err)
	}
	return s.wrapFmt()
}

// cellLogger is log.Logger for cells: the compiled logger with all its methods,
// except that Fatal, Fatalf and Fatalln end the cell, as os.Exit does in a
// cell, instead of the kernel.
type cellLogger struct{ *log.Logger }

func newLogger(out io.Writer, prefix string, flag int) *cellLogger {
	return &cellLogger{log.New(out, prefix, flag)}
}

// Fatal is Print followed by os.Exit(1) (a panic in a cell).
func (l *cellLogger) Fatal(v ...any) {
	_ = l.Output(2, fmt.Sprint(v...))
	panic("os.Exit(1)")
}

// Fatalf is Printf followed by os.Exit(1) (a panic in a cell).
func (l *cellLogger) Fatalf(format string, v ...any) {
	_ = l.Output(2, fmt.Sprintf(format, v...))
	panic("os.Exit(1)")
}

// Fatalln is Println followed by os.Exit(1) (a panic in a cell).
func (l *cellLogger) Fatalln(v ...any) {
	_ = l.Output(2, fmt.Sprintln(v...))
	panic("os.Exit(1)")
}

// sortOrdered sorts the slice x of an ordered element type in increasing
// order, as slices.Sort does: with slices.Sort for the basic element types,
// and for other slices of ordered kinds (a cell's `type celsius float64`
// when yaegi hands over its own representation) with sort.Slice, the same
// pattern-defeating quicksort, comparing by kind.
func sortOrdered(x any) {
	switch s := x.(type) {
	case []int:
		slices.Sort(s)
	case []int64:
		slices.Sort(s)
	case []int32:
		slices.Sort(s)
	case []uint8:
		slices.Sort(s)
	case []float64:
		slices.Sort(s)
	case []float32:
		slices.Sort(s)
	case []string:
		slices.Sort(s)
	case []uint:
		slices.Sort(s)
	case []uint64:
		slices.Sort(s)
	default:
		v := reflect.ValueOf(x)
		if v.Kind() != reflect.Slice {
			panic(fmt.Sprintf("slices.Sort: %T is not a slice", x))
		}
		sort.Slice(x, func(i, j int) bool { return orderedLess(v.Index(i), v.Index(j)) })
	}
}

// orderedLess is cmp.Less on values of one ordered kind: NaN sorts first.
func orderedLess(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() < b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() < b.Uint()
	case reflect.Float32, reflect.Float64:
		x, y := a.Float(), b.Float()
		return x < y || (math.IsNaN(x) && !math.IsNaN(y))
	case reflect.String:
		return a.String() < b.String()
	}
	panic(fmt.Sprintf("slices.Sort: elements of kind %s are not ordered", a.Kind()))
}
