package train

import (
	"context"
	"reflect"
	"testing"

	"github.com/harmonium-rbm/harmonium/rbmcore/data"
	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// TestPhase checks that Options.Phase names each end-of-epoch measurement
// as it starts, and clears it when the updates resume.
func TestPhase(t *testing.T) {
	set, err := data.BarsAndStripes(3)
	if err != nil {
		t.Fatal(err)
	}
	m := rbm.New(rbm.Binary(9), rbm.Binary(4), rbm.Seed(1))
	var got []string
	o := Options{Epochs: 4, Batch: 4, LR: 0.1, Seed: 1,
		Monitor: Monitor{PLEvery: 2, ReconEvery: 4},
		Phase:   func(what string) { got = append(got, what) }}
	if _, err := Fit(context.Background(), m, set, CD{}, nil, o); err != nil {
		t.Fatal(err)
	}
	// Epochs 1 and 3 measure nothing.
	want := []string{
		"epoch 2: measuring the held-out pseudo-likelihood", "",
		"epoch 4: measuring the held-out pseudo-likelihood", "epoch 4: measuring the reconstruction error", "",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("phases %q, want %q", got, want)
	}
}
