package train_test

import (
	"context"
	"fmt"

	"github.com/harmonium-rbm/harmonium/rbmcore/data"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
	"github.com/harmonium-rbm/harmonium/rbmcore/train"
)

// Train a small RBM on bars-and-stripes with PCD and read the history.
func ExampleTrainer_Fit() {
	set, _ := data.BarsAndStripes(3)
	m := rbm.New(rbm.Binary(9), rbm.Binary(16), rbm.Seed(1), rbm.WeightScale(0.1))
	tr := train.Trainer{
		Method: train.PCD, Chains: 32, K: 3, Batch: 16, Epochs: 2000,
		LR: 0.03, Optimizer: train.Adam, Schedule: train.GeometricDecay(2000, 0.3, 0.01),
		Seed:    1,
		Monitor: train.Monitor{PLEvery: 1000, ReconEvery: -1, LogLikEvery: 1000},
	}
	hist, err := tr.Fit(context.Background(), m, set)
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

// The seed 001 schedule: k = ⌈epoch/10⌉ Gibbs sweeps and η = η₀/k.
func ExampleSeed001() {
	for _, epoch := range []int{1, 10, 11, 500} {
		k, lr := train.Seed001(epoch, 1, 0.1)
		fmt.Printf("epoch %d: k = %d, η = %.4f\n", epoch, k, lr)
	}
	// Output:
	// epoch 1: k = 1, η = 0.1000
	// epoch 10: k = 1, η = 0.1000
	// epoch 11: k = 2, η = 0.0500
	// epoch 500: k = 50, η = 0.0020
}

// Seed 001's Linear units have a fixed unit curvature: freeze γ and train
// the rest.
func ExampleTrainer_freeze() {
	set, _ := data.BarsAndStripes(3)
	m := rbm.New(rbm.Binary(9), rbm.Gaussian(4), rbm.Seed(1))
	tr := train.Trainer{Method: train.CD, Batch: 7, Epochs: 20, LR: 0.05, Init: train.InitSeed001,
		Freeze: []string{"hidden.gamma"}, Seed: 1, Monitor: train.Monitor{ReconEvery: -1}}
	if _, err := tr.Fit(context.Background(), m, set); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("γ:", m.Hidden.(*rbm.GaussianLayer).Gamma)
	tr.Freeze = []string{"hidden.gama"}
	_, err := tr.Fit(context.Background(), m, set)
	fmt.Println(err != nil)
	// Output:
	// γ: [1 1 1 1]
	// true
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
