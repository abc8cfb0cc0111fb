package sweep_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/harmonium-rbm/harmonium/lang/sweep"
)

// A table saved as CSV, with a note saying how it was made, reads back with
// its parameters typed and its results by name: how a notebook reads the
// committed results of a sweep that ran on a cluster.
func ExampleReadCSV() {
	dir, err := os.MkdirTemp("", "sweep-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	t := &sweep.Table{Params: []string{"M", "data"}, Results: []string{"p"},
		Note: "harmonium sweep run rbm.go --grid grid.json --out runs",
		Rows: []sweep.Row{
			{Index: 0, State: "done", Params: sweep.Params{"M": int64(10), "data": "real"}, Values: map[string]float64{"p": 0.41}, N: 1},
			{Index: 1, State: "done", Params: sweep.Params{"M": int64(100), "data": "real"}, Values: map[string]float64{"p": 0.21}, N: 1},
		}}
	path := filepath.Join(dir, "table.csv")
	if err := t.Save(path); err != nil {
		panic(err)
	}
	back, err := sweep.ReadCSV(path)
	if err != nil {
		panic(err)
	}
	fmt.Println(back.Note)
	for _, r := range back.Where("data", "real").Rows {
		fmt.Printf("M = %d: p = %.2f\n", r.Params["M"].(int64), r.Values["p"])
	}
	// Output:
	// harmonium sweep run rbm.go --grid grid.json --out runs
	// M = 10: p = 0.41
	// M = 100: p = 0.21
}

// A notebook that reads a committed table refuses one that another version
// of its script produced: Collect records the script's SHA-256, and the CSV
// form keeps it.
func ExampleTable_CheckScript() {
	script := `sweep.Record("p", 0.2)`
	sum := sha256.Sum256([]byte(script))
	t := &sweep.Table{ScriptSHA256: hex.EncodeToString(sum[:])}
	fmt.Println(t.CheckScript(script))
	fmt.Println(t.CheckScript(script+" // edited") != nil)
	// Output:
	// <nil>
	// true
}
