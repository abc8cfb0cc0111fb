// Package lang runs notebook cells written in Go on the yaegi v0.16.1
// interpreter, with the compiled rbmcore, gonum and gonum/plot packages at
// hand. It is what `harmonium kernel` and `harmonium run` execute cells with;
// it knows nothing of Jupyter's wire protocol (see Output).
//
// # The dialect
//
// A cell is any mix of imports, declarations and statements, in any order.
// Imports run first (an import already made in the session is skipped, so
// cells can be re-run); then type, function and constant declarations; then
// statements and the declarations that use variables those statements
// declare, in source order. State persists across cells, and re-running or
// changing a cell redefines its functions, types and methods (a redefined
// type gets a fresh internal name, so values made before keep the old type,
// as in Python; errors still call it T). A standard-library package a cell
// uses without importing it (fmt.Println in the first cell) is imported for
// it, as goimports does, unless the name is a variable of the session. A
// cell holding a whole program (package clause, imports, func main) runs
// main once, after all of the cell's declarations and statements; main()
// in a later cell runs it again. A name whose declaration failed to compile
// stays undefined: using it is an error naming that failure.
//
// Before evaluation the cell is rewritten (textually, so line numbers stay the
// cell's) so that Go 1.22 code runs on the older interpreter: `for i := range
// n` over integers, the min, max and clear builtins (untyped constants fold;
// floats keep NaN semantics), per-iteration loop variables when a loop body
// captures them, and `go` statements whose goroutine's panic is recovered and
// becomes the error of the cell that started it. In a cell,
// context.Background() and context.TODO() mean the cell's own context.
//
// Newer Go runs too (see gostd.go, rewrite_go.go, fmttypes.go): range over
// functions (iter.Seq, iter.Seq2; the iterator runs on a goroutine of its
// own, as with iter.Pull), new(expr), errors.AsType, the generic functions
// of slices, maps and cmp for every element type (interpreted generics;
// slices.Sort of basic types runs compiled), os/exec and the whole
// log.Logger, and %T, %+v and %#v naming a cell's struct types (main.point).
// Not supported: a generic call whose type argument must be inferred from
// an untyped float constant (cmp.Compare(1.5, x) is rewritten to take it as
// float64, wrong for a float32 x), slices.Concat()
// without arguments, errors.As into a cell's type through an error wrapped
// by compiled code (fmt.Errorf("%w")), %T of a cell's type that has a
// String method, named non-struct types (%T of `type celsius float64`
// prints float64), and two type assertions of the interpreter: a value of a
// cell's struct type held in a compiled interface type (io.Reader,
// plot.Normalizer) does not assert back to that type (x.(T) reports false,
// a type switch takes its default case; a pointer type *T works), and
// asserting a compiled interface value to a compiled empty struct type
// (n.(plot.LogScale)) panics (assert interface{}(n) instead, or use a type
// switch). Left out on purpose: os.Exit (it panics "os.Exit(1)"
// instead of ending the kernel), syscall's process control and unsafe.
//
// Every cell sees, without importing them, display (rich output), sweep
// (parameter sweeps, and the parameters of a sweep task's script), the
// rbmcore packages by their short names (rbm, data, mapping, replica,
// analysis, train, lattice), and `ctx`, the running cell's context.Context: it is
// cancelled when the user interrupts the kernel, so pass it to long rbmcore
// calls (ch.Run(ctx, n, bar.Func()), mapping.Pairwise(ctx, m)) and they
// stop within a second; rbmcore keeps no process-wide context. time.Sleep
// in a cell ends on interrupt. A compiled call that ignores its context
// cannot be stopped: half a second after the interrupt its cell is
// abandoned (the reply says so), none of its further statements runs, what
// it prints afterwards is discarded, and the next cell waits for the call to
// return (see interrupt.go). rbmcore calls user callbacks (progress bars,
// OnEpoch, …) on the calling goroutine only, so a panic in one is the
// cell's error, and a panic
// in interpreted code run on its worker goroutines (a Layer written in a
// cell) comes back as the call's error; neither ends the kernel.
//
// # Output
//
// os.Stdout and os.Stderr (of interpreted and of compiled code), fmt, log and
// print/println are captured through pipes and streamed live. The value of a
// final expression statement is the cell's result (execute_result), unless
// the cell ends with a declaration, an assignment, or a call whose results
// are not the point (fmt.Println, functions with no or several results). A
// failed cell has exactly one error: ename CompileError, SyntaxError, Panic,
// RuntimeError, GoroutinePanic, ImportError, UsageError or Interrupted, with a
// traceback whose positions (cell:LINE:COL) refer to the cell's own text
// (the rewrites carry a source map as line directives). A panic's frames,
// which yaegi prints on its error stream, are folded in, in cell terms:
// "at f (cell 3, line 2, column 5)", and "at cell 7 (line 4, column 1)"
// for the top-level statement of the cell that was running. The innermost
// frame of a runtime error is the statement that failed (see markFaults),
// and its message is Go's, with the index and length named where they can
// be recovered ("index out of range [5] with length 3", see explainBounds).
//
// Values render richly through package display (plots as PNG and SVG,
// images, matrices as HTML tables); types declared in cells may define
// HTML() string, Markdown() string, SVG() string or PNG() []byte.
//
// # Magics
//
// Lines starting with % or ! at column 0 are magics (%time, %timeit, %who,
// %whos, %reset, %env, %cd, %help) and shell escapes; a cell starting with
// %%time, %%timeit or %%writefile is a cell magic. See Magics.
package lang
