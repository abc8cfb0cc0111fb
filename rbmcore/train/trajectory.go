package train

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// trajectory is the run state of PTT: stored models (oldest first) and
// one set of chains per model plus the live one (last).
type trajectory struct {
	opt      PTT // resolved: no zero fields
	live     *rbm.RBM
	models   []*rbm.RBM // stored copies; models[len] is implicitly live
	chains   []*rbm.Chains
	acc, att []int // per neighbouring pair since it was formed
	rng      *rand.Rand
	b        int
	seed     uint64
	steps    int
	p        *products
	neg      *phase // the live chains' statistics
}

// newTrajectory starts PTT's chains on m (o resolved).
func newTrajectory(o PTT, m *rbm.RBM, seed uint64) (*trajectory, error) {
	c, err := rbm.NewChains(m, o.Chains, seed^0x9771)
	if err != nil {
		return nil, err
	}
	tr := &trajectory{opt: o, live: m, chains: []*rbm.Chains{c}, rng: rbm.NewRNG(seed, 0x9772), b: o.Chains, seed: seed}
	return tr, tr.store()
}

// store appends a copy of the live model (with a copy of the live chains)
// below the live model, dropping a redundant stored model when there are
// too many.
func (tr *trajectory) store() error {
	live := tr.chains[len(tr.chains)-1]
	cp := tr.live.Clone()
	c, err := rbm.NewChains(cp, tr.b, tr.seed^uint64(0x1000+tr.steps))
	if err != nil {
		return err
	}
	if err := c.SetStates(live.V, live.H); err != nil {
		return err
	}
	k := len(tr.models)
	tr.models = append(tr.models, cp)
	tr.chains = append(tr.chains[:k], c, live)
	tr.acc, tr.att = append(tr.acc, 0), append(tr.att, 0)
	if len(tr.models) > tr.opt.Models {
		drop, best := -1, -1.0
		for j := 1; j < len(tr.models)-1; j++ { // never the oldest or newest
			if r := float64(tr.acc[j]) / math.Max(1, float64(tr.att[j])); r > best {
				drop, best = j, r
			}
		}
		if drop < 0 {
			drop = 0
		}
		tr.models = append(tr.models[:drop], tr.models[drop+1:]...)
		tr.chains = append(tr.chains[:drop], tr.chains[drop+1:]...)
		// The pair below the dropped model now joins its two neighbours.
		tr.acc = append(tr.acc[:drop], tr.acc[drop+1:]...)
		tr.att = append(tr.att[:drop], tr.att[drop+1:]...)
		if drop > 0 {
			tr.acc[drop-1], tr.att[drop-1] = 0, 0
		}
	}
	return nil
}

func (tr *trajectory) negative() *phase { return tr.neg }

// advance runs the trajectory (run) and sets the statistics of the live
// chains and of the minibatch pos.
func (tr *trajectory) advance(ctx context.Context, k int, pos *phase) error {
	if err := pos.fill(tr.p); err != nil {
		return err
	}
	if err := tr.run(ctx, k); err != nil {
		return err
	}
	copy(tr.neg.v.f, tr.chains[len(tr.chains)-1].V.RawMatrix().Data)
	return tr.neg.fill(tr.p)
}

func (tr *trajectory) swapRate() float64 { return tr.rate() }

func (tr *trajectory) chainStates() [][]float64 {
	return [][]float64{tr.chains[len(tr.chains)-1].V.RawMatrix().Data}
}

func (tr *trajectory) hiddenStates() [][]float64             { return nil }
func (tr *trajectory) streamStates() ([][]byte, error)       { return nil, nil }
func (tr *trajectory) setStreamStates(states [][]byte) error { return noStreams(states) }

// run advances every model's chains k sweeps, proposes one pass of swaps
// (even or odd pairs in turn) and stores the live model when its swaps
// with the newest stored one have become rare.
func (tr *trajectory) run(ctx context.Context, k int) error {
	for _, c := range tr.chains {
		if err := c.Run(ctx, k, nil); err != nil {
			return err
		}
	}
	models := append(append([]*rbm.RBM(nil), tr.models...), tr.live)
	for j := tr.steps % 2; j+1 < len(models); j += 2 {
		a, b := tr.chains[j], tr.chains[j+1]
		faa, fab := models[j].FreeEnergy(a.V), models[j].FreeEnergy(b.V)
		fba, fbb := models[j+1].FreeEnergy(a.V), models[j+1].FreeEnergy(b.V)
		for r := 0; r < tr.b; r++ {
			tr.att[j]++
			d := faa[r] + fbb[r] - fab[r] - fba[r]
			if math.IsNaN(d) {
				return fmt.Errorf("PTT: free energy difference %v between stored models %d and %d", d, j, j+1)
			}
			if d >= 0 || tr.rng.Float64() < math.Exp(d) {
				tr.acc[j]++
				swapRow(a.V, b.V, r)
				swapRow(a.H, b.H, r)
			}
		}
	}
	tr.steps++
	top := len(tr.att) - 1
	if tr.att[top] >= 10*tr.b && float64(tr.acc[top]) < tr.opt.Acceptance*float64(tr.att[top]) {
		return tr.store()
	}
	return nil
}

func swapRow(a, b *mat.Dense, r int) {
	x, y := a.RawRowView(r), b.RawRowView(r)
	for i := range x {
		x[i], y[i] = y[i], x[i]
	}
}

// rate returns the overall swap acceptance of the current pairs.
func (tr *trajectory) rate() float64 {
	acc, att := 0, 0
	for j := range tr.acc {
		acc, att = acc+tr.acc[j], att+tr.att[j]
	}
	if att == 0 {
		return math.NaN()
	}
	return float64(acc) / float64(att)
}
