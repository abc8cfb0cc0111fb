// Package train fits RBMs to data by stochastic gradient ascent on the
// log-likelihood.
//
// A run is one call:
//
//	hist, err := train.Fit(ctx, m, set, train.PCD{Chains: 100}, train.Adam{},
//		train.Options{Epochs: 50, LR: 1e-3})
//
// The Method estimates the model average of the gradient: CD (contrastive
// divergence), PCD (persistent chains), PT (persistent chains with
// parallel tempering), PTT (parallel trajectory tempering), Exact (the
// exact model average, for small models) or ExactHidden (the exact model
// average over the hidden layer, for a few binary, spin or Potts hidden
// units and a wide visible layer). The Optimiser turns the ascent
// direction into a step: SGD, Momentum, Adam or RMSprop. Options holds everything
// else: epochs, minibatch size, learning rate and its Schedule,
// Regularisers (L2, L1, L1Squared, FieldsL2), a data-based Initialiser
// (InitCentred, InitGaussian), centred gradients, the batch normalisation
// of dReLU hidden units (BatchNorm), frozen parameters, the
// curvature floor, divergence detection, the per-epoch Monitor (held-out
// pseudo-likelihood, reconstruction error, log-likelihood by AIS or by
// log Z tracked across epochs, weight norms, chain statistics), EarlyStop,
// checkpoints that Resume continues from, and the callbacks. The zero
// value of every method, optimiser and option is a usable default, and
// the minibatches are shuffled every epoch. Every parameter of both layers
// is trained (the curvatures and thresholds of ReLU and dReLU units
// included), Potts layers are kept in the zero-sum gauge, and data sample
// weights (data.Set.Weights) weight the data phase.
//
// Fit reports progress through plain callbacks (Options.Progress,
// OnUpdate, OnEpoch), records a History with plot helpers, stops early,
// detects divergence (the last good parameters are kept), and stops
// within one minibatch when its context is cancelled (the model is left at
// the last completed update). The callbacks and the Schedule are only
// ever called on the goroutine that called Fit or Resume, between
// updates, so a panic in one unwinds through Fit like any other and
// leaves the model at the last completed update.
//
// During Fit, plain SGD keeps the weights in two arrays taken in turn (the
// new weights are written over the gradient, and the old ones are the
// backup for a divergence): the model's W always holds the current
// weights, and from OnUpdate, OnEpoch and once Fit returns they are in
// W's own array again, so a slice of it taken before Fit stays valid
// there (not from Progress or Schedule).
//
// Results depend only on the seed, the settings and the BLAS backend, not
// on the number of cores.
//
// References (cited by their keys in the documentation):
//
//   - [BR21] Bulso & Roudi 2021, on the activation functions of RBM hidden
//     units and the interactions they induce (the InitCentred initialisation and the
//     GrowingK schedule of their MNIST training, and their Exponential
//     units).
//   - [TCM19] Tubiana, Cocco & Monasson 2019, on the hidden units of RBMs
//     of lattice proteins (the L1Squared penalty, Eq. 15; InitGaussian, the
//     curvature floor, GeometricDecay, RMSprop and BatchNorm from their
//     reference implementation).
//   - [HTCM20] Harsh, Tubiana, Cocco & Monasson 2020, on place-cell
//     emergence in RBMs (trained with their fields held at 0:
//     Options.Freeze).
//   - Hinton 2002 (CD), Tieleman 2008 (PCD), Kingma & Ba 2015 (Adam),
//     Melchior, Fischer & Wiskott 2016 (centred gradients).
package train
