package train_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/harmonium-rbm/harmonium/rbmcore/data"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
	"github.com/harmonium-rbm/harmonium/rbmcore/train"
)

// Train a small RBM on bars-and-stripes with PCD and Adam, and read the
// history.
func ExampleFit() {
	ctx := context.Background()
	set, _ := data.BarsAndStripes(3)
	m := rbm.New(rbm.Binary(9), rbm.Binary(16), rbm.Seed(1), rbm.WeightScale(0.1))
	hist, err := train.Fit(ctx, m, set, train.PCD{K: 3, Chains: 32}, train.Adam{}, train.Options{
		Epochs: 2000, Batch: 16, LR: 0.03, Schedule: train.GeometricDecay(2000, 0.3, 0.01), Seed: 1,
		Monitor: train.Monitor{PLEvery: 1000, ReconEvery: -1, LogLikEvery: 1000},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	last := hist.Last()
	fmt.Println("epochs:", last.Epoch, "updates:", last.Updates)
	fmt.Println("within 0.5 nats of the optimum -2.599:", last.LogLik > -3.099)
	// Output:
	// epochs: 2000 updates: 2000
	// within 0.5 nats of the optimum -2.599: true
}

// Exact gradient ascent (with momentum) on a small model: the exact
// log-likelihood rises from that of the random start, −6.25 nats, towards
// the optimum −2.599.
func ExampleExact() {
	ctx := context.Background()
	set, _ := data.BarsAndStripes(3)
	m := rbm.New(rbm.Binary(9), rbm.Binary(4), rbm.Seed(2), rbm.WeightScale(0.1))
	loglik := func() float64 {
		z, _ := m.ExactLogZ(ctx)
		ll, _ := m.LogLikelihood(set.X, z)
		return ll
	}
	before := loglik()
	_, err := train.Fit(ctx, m, set, train.Exact{}, train.Momentum{}, train.Options{Epochs: 200, Batch: set.Len(), LR: 0.5})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("before %.2f, after above −4: %v\n", before, loglik() > -4)
	// Output:
	// before -6.25, after above −4: true
}

// The schedule of GrowingK: k = ⌈epoch/10⌉ Gibbs sweeps and η = η₀/k.
func ExampleGrowingK() {
	for _, epoch := range []int{1, 10, 11, 500} {
		k, lr := train.GrowingK(epoch, 1, 0.1)
		fmt.Printf("epoch %d: k = %d, η = %.4f\n", epoch, k, lr)
	}
	// Output:
	// epoch 1: k = 1, η = 0.1000
	// epoch 10: k = 1, η = 0.1000
	// epoch 11: k = 2, η = 0.0500
	// epoch 500: k = 50, η = 0.0020
}

// Linear hidden units with a fixed unit curvature: initialise from the
// data, freeze γ and train the rest with CD-1. A parameter name the model
// does not have is an error.
func ExampleOptions_freeze() {
	ctx := context.Background()
	set, _ := data.BarsAndStripes(3)
	m := rbm.New(rbm.Binary(9), rbm.Gaussian(4), rbm.Seed(1))
	o := train.Options{Batch: 7, Epochs: 20, LR: 0.05, Init: train.InitCentred{},
		Freeze: []string{"hidden.gamma"}, Seed: 1, Monitor: train.Monitor{ReconEvery: -1}}
	if _, err := train.Fit(ctx, m, set, train.CD{}, nil, o); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("γ:", m.Hidden.(*rbm.GaussianLayer).Gamma)
	o.Freeze = []string{"hidden.gama"}
	_, err := train.Fit(ctx, m, set, train.CD{}, nil, o)
	fmt.Println(err != nil)
	// Output:
	// γ: [1 1 1 1]
	// true
}

// Penalties and early stopping are typed options: an L2 weight decay and
// the L1² penalty, and a stop once the reconstruction error has not
// improved for 3 measurements, with the best parameters put back.
func ExampleOptions_regularisers() {
	ctx := context.Background()
	set, _ := data.BarsAndStripes(3)
	m := rbm.New(rbm.Binary(9), rbm.Binary(8), rbm.Seed(1), rbm.WeightScale(0.1))
	hist, err := train.Fit(ctx, m, set, train.CD{K: 1}, train.SGD{}, train.Options{
		Epochs: 500, Batch: 16, LR: 0.1, Seed: 1,
		Regularisers: []train.Regulariser{train.L2{Lambda: 1e-3}, train.L1Squared{Lambda: 0.025}},
		Monitor:      train.Monitor{PLEvery: -1},
		EarlyStop:    train.EarlyStop{Patience: 3, Metric: train.MetricRecon, RestoreBest: true},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("stopped early:", len(hist.Records) < 500)
	// Output:
	// stopped early: true
}

// A run that writes checkpoints can be continued with Resume and the same
// arguments, here up to more epochs.
func ExampleResume() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "train")
	defer os.RemoveAll(dir)
	set, _ := data.BarsAndStripes(3)
	m := rbm.New(rbm.Binary(9), rbm.Binary(4), rbm.Seed(1))
	method, opt := train.PCD{Chains: 8}, train.Adam{}
	o := train.Options{Epochs: 5, Batch: 4, LR: 0.02, Seed: 1, Checkpoint: filepath.Join(dir, "run.ckpt")}
	if _, err := train.Fit(ctx, m, set, method, opt, o); err != nil {
		fmt.Println(err)
		return
	}
	o.Epochs = 8
	hist, err := train.Resume(ctx, m, set, method, opt, o)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("epochs:", hist.Last().Epoch, "records:", len(hist.Records))
	// Output:
	// epochs: 8 records: 8
}

// A diverging run stops with a DivergenceError; the model keeps the
// parameters of the last good update.
func ExampleDivergenceError() {
	ctx := context.Background()
	set, _ := data.BarsAndStripes(3)
	m := rbm.New(rbm.Binary(9), rbm.Binary(4), rbm.Seed(1))
	_, err := train.Fit(ctx, m, set, train.CD{}, nil, train.Options{Batch: 16, Epochs: 50, LR: 50, MaxWeight: 20, Seed: 1})
	var div *train.DivergenceError
	fmt.Println(errors.As(err, &div), div != nil && div.Param == "weights")
	// Output:
	// true true
}

// History.Plot draws columns (see Columns) against the epoch.
func ExampleHistory_Plot() {
	h := &train.History{Records: []train.Record{
		{Epoch: 1, PseudoLikelihood: -5, ReconError: 0.2},
		{Epoch: 2, PseudoLikelihood: -4, ReconError: 0.1},
	}}
	p, err := h.Plot("pl", "recon")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.X.Label.Text, "|", p.Y.Label.Text)
	_, err = h.Plot("accuracy")
	fmt.Println(err)
	// Output:
	// epoch | pl, recon
	// train: unknown history column "accuracy" (want one of seconds, k, lr, pl, recon, loglik, loglik_low, loglik_high, weight_norm, max_weight, grad_norm, chain_mean, swap_rate, logz, update_pl)
}
