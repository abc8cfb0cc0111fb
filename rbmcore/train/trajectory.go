package train

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
)

// PTT is parallel trajectory tempering: PCD whose chains of the current
// model exchange states with chains of earlier models of the same run
// (copies stored along the training trajectory), the models taking the
// place of the temperatures of PT. The early models are close to
// independent sites and mix easily; swaps carry their states up to the
// current model. A swap of the states x, y of neighbouring models a, b is
// accepted with probability min(1, exp(F_a(x) + F_b(y) − F_a(y) − F_b(x))),
// F the free energies. The statistics come from the current model's chains.
// See TrajectoryOptions; a run resumed from a checkpoint restarts its
// trajectory from the current model.
const PTT = "ptt"

// TrajectoryOptions configures PTT. The zero value of every field is a
// usable default.
type TrajectoryOptions struct {
	// Models is the largest number of stored models (default 10). When it
	// is exceeded, the stored model whose swaps with its upper neighbour
	// are accepted most often (the most redundant) is dropped; the oldest
	// is always kept.
	Models int
	// Acceptance is the swap acceptance between the current model and the
	// newest stored one below which a copy of the current model is stored
	// (default 0.3).
	Acceptance float64
}

// trajectory is the sampler state of PTT: stored models (oldest first) and
// one set of chains per model plus the live one (last).
type trajectory struct {
	opt      TrajectoryOptions
	live     *rbm.RBM
	models   []*rbm.RBM // stored copies; models[len] is implicitly live
	chains   []*rbm.Chains
	acc, att []int // per neighbouring pair since it was formed
	rng      *rand.Rand
	b        int
	seed     uint64
	steps    int
}

func newTrajectory(t *Trainer, m *rbm.RBM) (*trajectory, error) {
	o := t.Trajectory
	if o.Models == 0 {
		o.Models = 10
	}
	if o.Acceptance == 0 {
		o.Acceptance = 0.3
	}
	if o.Models < 1 || !(o.Acceptance > 0 && o.Acceptance < 1) {
		return nil, fmt.Errorf("train: Trajectory.Models = %d (want ≥ 1), Trajectory.Acceptance = %v (want in (0, 1))", o.Models, o.Acceptance)
	}
	c, err := rbm.NewChains(m, t.Chains, t.Seed^0x9771)
	if err != nil {
		return nil, err
	}
	tr := &trajectory{opt: o, live: m, chains: []*rbm.Chains{c}, rng: rbm.NewRNG(t.Seed, 0x9772), b: t.Chains, seed: t.Seed}
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
				return fmt.Errorf("train: PTT: free energy difference %v between stored models %d and %d", d, j, j+1)
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
