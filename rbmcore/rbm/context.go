package rbm

import (
	"context"
	"sync/atomic"
)

// defaultContext holds the function DefaultContext calls (nil: background).
var defaultContext atomic.Pointer[func() context.Context]

// DefaultContext returns the context of rbmcore computations whose caller
// gave none: the convenience functions without a context parameter (e.g.
// mapping.Pairwise, RBM.PseudoLikelihood) and every function taking a ctx
// that is passed nil. It is context.Background() unless a host installed a
// source with SetDefaultContext; Harmonium installs the running notebook
// cell's context, so the interrupt button stops such calls too.
func DefaultContext() context.Context {
	if f := defaultContext.Load(); f != nil && *f != nil {
		if ctx := (*f)(); ctx != nil {
			return ctx
		}
	}
	return context.Background()
}

// SetDefaultContext makes DefaultContext return f() (background when f is
// nil or returns nil) and returns the previous function, so a host can
// restore it. It is process-wide and safe for concurrent use; a computation
// reads it once, when it starts, and keeps that context to its end.
func SetDefaultContext(f func() context.Context) (prev func() context.Context) {
	var p *func() context.Context
	if f != nil {
		p = &f
	}
	if old := defaultContext.Swap(p); old != nil {
		return *old
	}
	return nil
}

// ContextOrDefault returns ctx, or DefaultContext() when ctx is nil. Every
// rbmcore function taking a context passes it through this first.
func ContextOrDefault(ctx context.Context) context.Context {
	if ctx == nil {
		return DefaultContext()
	}
	return ctx
}
