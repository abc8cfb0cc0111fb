package train

import (
	"math"
	"runtime"
	"sync/atomic"

	"github.com/harmonium-rbm/harmonium/rbmcore/internal/workers"
)

// Row blocking of the weight pass. The visible units (rows of W) are cut
// into chunks of wChunk rows, which the workers claim one after the other
// (forChunks), and chunks into blocks of wBlock rows whose partial results
// (gradient norm, first diverging weight) are combined in block order, so
// nothing depends on the number of cores. A chunk's gradient rows are one
// product: smaller products would each pack the whole right factor again
// (measured: 64-row products make the pass ~15% slower than 200-row ones,
// which are as fast as one product per core).
const (
	wBlock = 8
	wChunk = 200
)

// forChunks runs fn on the chunks [c0, c1) of [0, n) (bounds multiples of
// size) on one goroutine per core (workers.ForRanges: single-threaded BLAS
// inside), each claiming the next chunk when done, so that a worker slowed
// down by other load on the machine takes fewer chunks. It returns the
// first error.
func forChunks(n, size int, fn func(c0, c1 int) error) error {
	chunks := (n + size - 1) / size
	var next atomic.Int64
	return workers.ForRanges(min(runtime.GOMAXPROCS(0), chunks), 1, func(int, int) error {
		for {
			c := int(next.Add(1) - 1)
			if c >= chunks {
				return nil
			}
			if err := fn(c*size, min((c+1)*size, n)); err != nil {
				return err
			}
		}
	})
}

// weightPass does the per-update work on the weights, row-parallel over
// the visible units: the weight gradient (products.outer), the elementwise
// penalties, the optimiser step with the backup of the previous values
// (plain SGD: none, see inDir), and the scan for divergence, the gradient
// norm and the float32 shadow.
type weightPass struct {
	r     *run
	lr    float64
	terms []term
	limit float64   // divergence threshold on |w| (resolved MaxWeight)
	gn    []float64 // per block: Σ of the squared ascent direction
	bad   []int     // per block: flat index of the first bad weight, or −1
	// inDir: the last run was plain SGD in one pass, which leaves W as it
	// was and writes the new weights over the direction r.dir.W
	// (run.swapWeights then exchanges the two arrays).
	inDir bool
}

func (wp *weightPass) init(r *run) {
	blocks := (r.prod.nv + wBlock - 1) / wBlock
	*wp = weightPass{r: r, limit: weightLimit(r.o.MaxWeight, r.m), gn: make([]float64, blocks), bad: make([]int, blocks)}
}

// run performs the selected parts on every chunk of rows: gemm computes
// the gradient rows into r.dir.W and the phase means (sumColumns: the
// chunk's visible columns and the matching share of the hidden ones); step
// backs W up, applies the L2/L1 penalties to the direction and the
// optimiser step (none when the weights are frozen); check scans the new
// weights and the direction and refreshes the float32 shadow. Step and
// check together with plain SGD are one sweep (sgdShadow) that leaves W
// as it is. Products are rounded before they are added (float64(...)),
// as in sgdShadow, so that no compiler fuses them into an FMA and the
// results are the same on every architecture.
func (wp *weightPass) run(gemm, step, check bool) error {
	r := wp.r
	p := r.prod
	nh := p.nh
	last := len(r.params) - 1
	w, d, backup := r.params[last], r.dir.W.RawMatrix().Data, r.backup[last]
	frozen := r.frozen[last]
	l2, l1 := r.pen.l2, r.pen.l1
	lim := math.Min(wp.limit, math.MaxFloat64) // ±Inf count as divergence
	wp.inDir = step && check && r.opt.plain() && !frozen
	return forChunks(p.nv, wChunk, func(i0, i1 int) error {
		if gemm {
			p.outer(i0, i1, wp.terms, d)
			for _, ph := range []*phase{r.pos, r.chains.negative()} {
				ph.sumColumns(i0, i1, i0*nh/p.nv, i1*nh/p.nv)
			}
		}
		for b0 := i0; b0 < i1; b0 += wBlock {
			b1 := min(b0+wBlock, i1)
			lo, hi := b0*nh, b1*nh
			if wp.inDir {
				// The common case in one sweep: direction, step (into
				// d), scan, shadow.
				w32, abs := p.shadow(b0, b1)
				first, s := sgdShadow(w[lo:hi], d[lo:hi], w32, abs, nh, wp.lr, l2, l1, lim)
				if first >= 0 {
					first += lo
				}
				wp.bad[b0/wBlock], wp.gn[b0/wBlock] = first, s
				continue
			}
			if step {
				copy(backup[lo:hi], w[lo:hi])
				if l2 > 0 || l1 > 0 {
					for k, x := range w[lo:hi] {
						d[lo+k] -= float64(l2*x) + float64(l1*sign(x))
					}
				}
				if !frozen {
					r.opt.apply(last, lo, hi, w, d, wp.lr)
				}
			}
			if check {
				first, s := -1, 0.0
				for k, x := range w[lo:hi] {
					if !(math.Abs(x) <= lim) {
						first = lo + k
						break
					}
				}
				for _, x := range d[lo:hi] {
					s += float64(x * x)
				}
				wp.bad[b0/wBlock], wp.gn[b0/wBlock] = first, s
				p.refresh(w, b0, b1)
			}
		}
		return nil
	})
}

// norm returns the Euclidean norm of the weight direction of the last check.
func (wp *weightPass) norm() float64 {
	s := 0.0
	for _, x := range wp.gn {
		s += x
	}
	return math.Sqrt(s)
}

// firstBad returns the flat index of the first weight found bad (not
// finite, or beyond the limit) by the last check, or −1.
func (wp *weightPass) firstBad() int {
	for _, k := range wp.bad {
		if k >= 0 {
			return k
		}
	}
	return -1
}
