package rbm

// Layer is one family of units of an RBM, vectorised over a batch.
//
// Conventions (shared by every algorithm in rbmcore): a unit with value h and
// input I has weight exp(-U(h) + I*h), where U is the unit's potential and
// contains -θh (θ is a field). The cumulant generating function of a unit is
// Γ(I) = log Σ_h exp(-U(h) + I*h) (an integral for continuous units), so
// Γ'(I) is the conditional mean and Γ''(I) the conditional variance.
//
// Batched methods take row-major matrices flattened into slices: a batch of B
// rows has B*Width() entries, Width() = Len()*States().
type Layer interface {
	// Kind is the model-file name of the layer: binary, spin, potts,
	// gaussian, relu, drelu or poisson.
	Kind() string
	// Len is the number of units.
	Len() int
	// States is the one-hot width of a unit: q for Potts, 1 otherwise.
	States() int

	// UnitCGF sets out[k] = Γ_u(in[k]) for the single scalar unit u
	// (the unit's own parameters included). Not defined for Potts layers.
	UnitCGF(u int, in, out []float64)
}
