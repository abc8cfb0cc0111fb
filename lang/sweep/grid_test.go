package sweep

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestGridProduct(t *testing.T) {
	g, err := ParseGrid([]byte(`{
	  "axes": [
	    {"name": "act", "values": ["relu", "step"]},
	    {"zip": [{"name": "lr", "values": [0.1, 0.01]}, {"name": "batch", "values": [10, 100]}]},
	    {"name": "M", "range": {"from": 2, "to": 6, "step": 4}}
	  ],
	  "seeds": {"count": 2, "from": 7}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(g.Names(), ","), "act,lr,batch,M,seed"; got != want {
		t.Errorf("names %s, want %s", got, want)
	}
	tasks, err := g.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 2*2*2*2 {
		t.Fatalf("%d tasks, want 16", len(tasks))
	}
	// The first axis varies slowest, the seeds fastest; zipped axes together.
	want := []Params{
		{"act": "relu", "lr": 0.1, "batch": int64(10), "M": int64(2), "seed": int64(7)},
		{"act": "relu", "lr": 0.1, "batch": int64(10), "M": int64(2), "seed": int64(8)},
		{"act": "relu", "lr": 0.1, "batch": int64(10), "M": int64(6), "seed": int64(7)},
	}
	for k, w := range want {
		for name, v := range w {
			if tasks[k][name] != v {
				t.Errorf("task %d: %s = %v (%T), want %v (%T)", k, name, tasks[k][name], tasks[k][name], v, v)
			}
		}
	}
	last := tasks[15]
	if last["act"] != "step" || last["lr"] != 0.01 || last["batch"] != int64(100) || last["M"] != int64(6) || last["seed"] != int64(8) {
		t.Errorf("last task %v", last)
	}
}

func TestGridSpaced(t *testing.T) {
	g, err := ParseGrid([]byte(`{"axes": [{"name": "g", "logspace": {"from": 0.001, "to": 10, "num": 5}},
	  {"name": "b", "linspace": {"from": 1, "to": 2, "num": 3}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	tasks, _ := g.Tasks()
	for k := range 5 {
		want := math.Pow(10, -3+float64(k)) // decades
		if got := tasks[3*k]["g"].(float64); math.Abs(got-want) > 1e-12*want {
			t.Errorf("logspace point %d = %v, want %v", k, got, want)
		}
	}
	for k, want := range []float64{1, 1.5, 2} {
		if got := tasks[k]["b"].(float64); got != want {
			t.Errorf("linspace point %d = %v, want %v", k, got, want)
		}
	}
}

func TestGridErrors(t *testing.T) {
	for _, c := range []struct{ grid, want string }{
		{`{"axes": [{"name": "a", "values": [1]}, {"name": "a", "values": [2]}]}`, `"a" appears twice`},
		{`{"axes": [{"zip": [{"name": "a", "values": [1, 2]}, {"name": "b", "values": [1]}]}]}`, "axes[0].zip[1] (b): 1 values, zip[0] (a) has 2"},
		{`{"axes": [{"name": "g", "logspace": {"from": 0, "to": 1, "num": 3}}]}`, "both ends must be > 0"},
		{`{"axes": [{"name": "g", "values": [1], "range": {"from": 1, "to": 2}}]}`, "exactly one of"},
		{`{"axes": [{"name": "g", "valeus": [1]}]}`, `unknown field "valeus"`},
		{`{"axes": [{"name": "n", "range": {"from": 5, "to": 1}}]}`, "is empty"},
		{`{"axes": [{"name": "x", "values": [[1]]}]}`, "values[0]"},
		{`{"axes": [{"name": "a", "values": [1]}],` + "\n" + `"seeds": {"count": 0}}`, "count 0"},
		{"{\n\"axes\": [,]}", "line 2"},
		{`{"axes": [{"name": "n", "range": {"from": 0, "to": 2000000}}]}`, "more than 1000000"},
	} {
		_, err := ParseGrid([]byte(c.grid))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("grid %s: error %v, want one containing %q", c.grid, err, c.want)
		}
	}
}

// A float parameter stays a float through the manifest, an int an int.
func TestParamsRoundTrip(t *testing.T) {
	p := Params{"a": 1.0, "b": int64(1), "c": "x", "d": true, "e": 2.5e-8}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"a":1.0,"b":1,"c":"x","d":true,"e":2.5e-08}` {
		t.Errorf("JSON %s", b)
	}
	var q Params
	if err := json.Unmarshal(b, &q); err != nil {
		t.Fatal(err)
	}
	for k, v := range p {
		if q[k] != v {
			t.Errorf("%s: %v (%T) read back as %v (%T)", k, v, v, q[k], q[k])
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), -0.5} {
		b, _ := json.Marshal(Value{"v", f})
		var v Value
		if err := json.Unmarshal(b, &v); err != nil || !(v.Value == f || math.IsNaN(f) && math.IsNaN(v.Value)) {
			t.Errorf("%v: %s read back as %v (%v)", f, b, v.Value, err)
		}
	}
}

func TestArraySpec(t *testing.T) {
	if got := arraySpec([]int{9, 0, 1, 2, 3, 12, 13, 5}); got != "0-3,5,9,12-13" {
		t.Errorf("arraySpec = %q", got)
	}
}
