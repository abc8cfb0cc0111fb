package rbm

import "context"

// ContextOrDefault returns ctx, or context.Background() when ctx is nil, so
// a caller that passes a nil context gets a computation that runs to its
// end instead of a nil-pointer panic. Every rbmcore function taking a
// context passes it through this first.
func ContextOrDefault(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}
