package data_test

import (
	"context"
	"fmt"
	"os"

	"github.com/harmonium-rbm/harmonium/rbmcore/data"
)

func ExampleBarsAndStripes() {
	set, _ := data.BarsAndStripes(3)
	fmt.Println(set.Len(), "images of", set.Width(), "pixels, kind", set.Kind)
	fmt.Println(set.Row(5)) // stripes: rows 0 and 2 on
	// Output:
	// 16 images of 9 pixels, kind binary
	// [1 1 1 0 0 0 1 1 1]
}

func ExampleIsingRing() {
	ring := data.IsingRing{N: 20, Beta: 0.5}
	set, _ := ring.Sample(context.Background(), 1000, 1)
	fmt.Println(set.Len(), set.Units(), set.Kind)
	fmt.Printf("exact <v_i v_i+1> = %.4f\n", ring.Correlation(1))
	// Output:
	// 1000 20 spin
	// exact <v_i v_i+1> = 0.4621
}

func ExampleSet_Minibatches() {
	set, _ := data.BarsAndStripes(2)
	train, test, _ := set.Split(0.25, 1)
	it, _ := train.Minibatches(4, data.BatchOptions{Seed: 1})
	for epoch := 1; epoch <= 2; epoch++ {
		n := 0
		for it.Next() {
			n += it.Batch().RawMatrix().Rows
		}
		it.Reset()
		fmt.Println("epoch", epoch, "saw", n, "rows; test rows:", test.Len())
	}
	// Output:
	// epoch 1 saw 6 rows; test rows: 2
	// epoch 2 saw 6 rows; test rows: 2
}

func ExampleMNIST() {
	// data.MNIST finds the official files wherever this machine has them;
	// here $HARMONIUM_DATA points it at the excerpts bundled for tests (the
	// first 300 images of each file), so the example runs anywhere.
	os.Setenv("HARMONIUM_DATA", "testdata")
	defer os.Unsetenv("HARMONIUM_DATA")
	digits, err := data.MNIST(context.Background(), "train", data.CatalogueOptions{Binarize: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(digits.Len(), "images of", digits.Width(), "pixels, kind", digits.Kind)
	fmt.Println("labels", digits.Labels[:10])
	fmt.Println("from", digits.Source)
	// Output:
	// 300 images of 784 pixels, kind binary
	// labels [5 0 4 1 9 2 1 3 1 4]
	// from testdata/mnist/train-images-idx3-ubyte.gz
}
