// Package guard keeps a panic in a worker goroutine of rbmcore from killing
// the process. Worker goroutines run code that may come from the user (a
// Layer implemented in a notebook cell, interpreted by yaegi); a panic there
// would otherwise end the whole kernel, since nothing up that goroutine's
// stack can recover it. Call turns such a panic into an error that the
// computation returns to its caller.
package guard

import "fmt"

// Call runs f and returns its error, or an error carrying the panic value
// (wrapped with %w when it is an error) when f panics.
func Call(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = fmt.Errorf("panic in a worker goroutine: %w", e)
			} else {
				err = fmt.Errorf("panic in a worker goroutine: %v", r)
			}
		}
	}()
	return f()
}
