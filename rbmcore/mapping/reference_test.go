package mapping

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/harmonium-rbm/harmonium/rbmcore/rbm"
	"gonum.org/v1/gonum/mat"
)

// A small reference model ([BR21] conventions: threshold c, here θ = −c)
// and its interactions, computed independently by brute force with numpy.
var (
	refW = []float64{
		0.5, -0.3, 0.8,
		-0.7, 0.4, 0.2,
		0.1, 0.9, -0.6,
		0.3, -0.5, 0.45,
	}
	refB = []float64{0.1, -0.2, 0.3, -0.4}
	refC = []float64{0.25, -0.5, 1.0}
	// 1-based site sets in the order {1} {2} {3} {4} {1,2} {1,3} {1,4} {2,3}
	// {2,4} {3,4} {1,2,3} {1,2,4} {1,3,4} {2,3,4} {1,2,3,4}.
	refSets = [][]int{{1}, {2}, {3}, {4}, {1, 2}, {1, 3}, {1, 4}, {2, 3}, {2, 4}, {3, 4},
		{1, 2, 3}, {1, 2, 4}, {1, 3, 4}, {2, 3, 4}, {1, 2, 3, 4}}
	refWant = map[string][]float64{
		"gaussian": {-0.485, 0.32, 1.915, -0.90375, -0.31, -0.7, 0.66, 0.17, -0.32, -0.69, 0, 0, 0, 0, 0},
		"relu": {0.713301873295, -0.0779996561415, 1.22963536342, -0.361794921332,
			-0.120742402642, -0.238806324599, 0.223560973558, 0.202293530962, -0.131680337228, -0.286342869439,
			-0.050385854237, 0.00796489706429, 0.0080870709113, -0.0612900505806, -0.00322899065151},
		"binary": {0.458939067065, -0.124067144046, 0.861997107019, -0.396178781541,
			-0.0742659375524, -0.142396119179, 0.159748768709, 0.0280520343368, -0.0765794224688, -0.141904911348,
			0.000746284667416, -0.00227198788264, -0.0225577806956, 0.00886036861763, 0.00127874604201},
		"poisson": {0.628757432983, 0.300271603786, 2.62240296632, -0.567180588186,
			-0.364683579699, -0.77399935759, 0.601118315497, 1.10558329525, -0.409933946421, -1.01254974981,
			-0.378545059846, 0.0504403470888, 0.148397204969, -0.501007574428, 0.0857464245279},
	}
)

// referenceModel builds the reference model with the given hidden kind (γ = 1).
func referenceModel(kind string) *rbm.RBM {
	var hid rbm.Layer
	switch kind {
	case "gaussian":
		hid = rbm.Gaussian(3)
	case "relu":
		hid = rbm.ReLU(3)
	case "binary":
		hid = rbm.Binary(3)
	case "poisson":
		hid = rbm.Poisson(3)
	}
	theta := paramByName(hid, "theta")
	for u, c := range refC {
		theta[u] = -c
	}
	vis := rbm.Binary(4)
	copy(vis.Theta, refB)
	return &rbm.RBM{Visible: vis, Hidden: hid, W: mat.NewDense(4, 3, append([]float64(nil), refW...))}
}

func TestReferenceVectors(t *testing.T) {
	for kind, want := range refWant {
		m := referenceModel(kind)
		mp, err := New(m)
		if err != nil {
			t.Fatal(err)
		}
		for i, set := range refSets {
			sites := make([]int, len(set))
			for j, k := range set {
				sites[j] = k - 1
			}
			got, err := mp.Term(sites...)
			if err != nil {
				t.Fatal(err)
			}
			if d := math.Abs(got - want[i]); !(d <= 1e-11*math.Max(1, math.Abs(want[i]))) {
				t.Errorf("%s: I%v = %.13g, reference %.13g", kind, set, got, want[i])
			}
			if kind == "gaussian" && len(set) >= 3 && got != 0 {
				t.Errorf("Linear I%v = %g, want exactly 0", set, got)
			}
		}
	}
}

// ExampleMapper_Term maps the ReLU RBM of the reference model (N = 4, M = 3).
func ExampleMapper_Term() {
	m := referenceModel("relu")
	mp, err := New(m)
	if err != nil {
		fmt.Println(err)
		return
	}
	j01, _ := mp.Term(0, 1)
	i012, _ := mp.Term(0, 1, 2)
	fmt.Printf("J_01 = %.9f\nI_012 = %.9f\n", j01, i012)
	// Output:
	// J_01 = -0.120742403
	// I_012 = -0.050385854
}

// ExampleAll lists every interaction of a two-site Step RBM.
func ExampleAll() {
	m := &rbm.RBM{Visible: rbm.Binary(2), Hidden: rbm.Binary(1), W: mat.NewDense(2, 1, []float64{1, -1})}
	terms, err := All(context.Background(), m, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range terms {
		fmt.Printf("%v %.6f\n", t.Sites, t.Value)
	}
	// Output:
	// [0] 0.620115
	// [1] -0.379885
	// [0 1] -0.240229
}
