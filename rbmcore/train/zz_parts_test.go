package train

import (
	"math"
	"math/rand/v2"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/mathx"
	"os"
	"testing"
	"time"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

func TestZZParts(t *testing.T) {
	if os.Getenv("ZZ") == "" {
		t.Skip()
	}
	m := rbm.New(rbm.Binary(784), rbm.Binary(500), rbm.Seed(1))
	rng := rand.New(rand.NewPCG(1, 2))
	in := make([]float64, 100*784)
	for i := range in {
		in[i] = rng.NormFloat64() * 3
	}
	out := make([]float64, 100*784)
	best := func(name string, f func()) {
		b := 1e9
		for rep := 0; rep < 200; rep++ {
			t0 := time.Now()
			f()
			b = min(b, time.Since(t0).Seconds()*1e3)
		}
		t.Logf("%s: %.3f ms", name, b)
	}
	best("sample 50x500 hidden", func() { m.Hidden.Sample(rng, in[:50*500], out[:50*500], 1) })
	best("sample 50x784 visible", func() { m.Visible.Sample(rng, in[:50*784], out[:50*784], 1) })
	best("mean 50x500", func() { m.Hidden.Mean(in[:50*500], out[:50*500]) })
	w := make([]float64, 392*500)
	d := make([]float64, 392*500)
	bk := make([]float64, 392*500)
	best("sgd 392x500", func() {
		for b0 := 0; b0 < 392; b0 += 8 {
			sgdBlock(w[b0*500:(b0+8)*500], d[b0*500:(b0+8)*500], bk[b0*500:(b0+8)*500], 1e-9, 0, 0, 1e3, 0)
		}
	})
	best("copy 392x500", func() { copy(bk, w) })
}

func TestZZExp(t *testing.T) {
	if os.Getenv("ZZ") == "" {
		t.Skip()
	}
	rng := rand.New(rand.NewPCG(1, 2))
	in := make([]float64, 25000)
	for i := range in {
		in[i] = rng.NormFloat64() * 3
	}
	out := make([]float64, 25000)
	best := func(name string, f func()) {
		b := 1e9
		for rep := 0; rep < 200; rep++ {
			t0 := time.Now()
			f()
			b = min(b, time.Since(t0).Seconds()*1e3)
		}
		t.Logf("%s: %.3f ms", name, b)
	}
	best("math.Exp sigmoid", func() {
		for i, x := range in {
			out[i] = 1 / (1 + math.Exp(-x))
		}
	})
	best("mathx.Sigmoid", func() {
		for i, x := range in {
			out[i] = mathx.Sigmoid(x)
		}
	})
}
