package sweep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// Grid is a parameter grid: the Cartesian product of its axes (the first
// axis varies slowest), each point repeated for every seed. Its JSON form,
// as read by ParseGrid:
//
//	{
//	  "axes": [
//	    {"name": "M", "values": [10, 20, 50]},
//	    {"name": "gamma", "logspace": {"from": 0.01, "to": 1, "num": 5}},
//	    {"name": "beta", "linspace": {"from": 0.2, "to": 1, "num": 5}},
//	    {"name": "epochs", "range": {"from": 10, "to": 50, "step": 20}},
//	    {"zip": [{"name": "lr", "values": [0.1, 0.01]},
//	             {"name": "batch", "values": [10, 100]}]}
//	  ],
//	  "seeds": {"name": "seed", "count": 3, "from": 1}
//	}
//
// An axis has a name and exactly one of values (an explicit list of
// numbers, strings or booleans), logspace (num points from from to to,
// equally spaced in log, both ends included), linspace (the same, equally
// spaced) or range (integers from, from+step, … up to and including to). A
// zip axis steps through its member axes together, which must have equal
// lengths. seeds, optional, repeats every point count times with the
// integer parameter name (default "seed") set to from, from+1, … (from
// defaults to 1); the table averages over it (Table.Aggregate). A number
// written without a fraction or exponent is an int parameter, any other
// number a float; logspace and linspace give floats.
type Grid struct {
	// Axes are multiplied together, the first varying slowest.
	Axes []Axis `json:"axes"`
	// Seeds, if set, repeats each point of the product.
	Seeds *Seeds `json:"seeds,omitempty"`
}

// Axis is one axis of a Grid: a named list of values, or a zip of axes.
type Axis struct {
	Name     string  `json:"name,omitempty"`
	Values   []any   `json:"values,omitempty"`
	Logspace *Spaced `json:"logspace,omitempty"`
	Linspace *Spaced `json:"linspace,omitempty"`
	Range    *Range  `json:"range,omitempty"`
	Zip      []Axis  `json:"zip,omitempty"`
}

// Spaced is Num points from From to To (both included).
type Spaced struct {
	From float64 `json:"from"`
	To   float64 `json:"to"`
	Num  int     `json:"num"`
}

// Range is the integers From, From+Step, … up to To (included when hit);
// Step 0 means 1.
type Range struct {
	From int `json:"from"`
	To   int `json:"to"`
	Step int `json:"step,omitempty"`
}

// Seeds repeats each grid point Count times with an integer parameter Name
// (default "seed") taking the values From, From+1, … (From 0 means 1).
type Seeds struct {
	Name  string `json:"name,omitempty"`
	Count int    `json:"count"`
	From  int    `json:"from,omitempty"`
}

// maxTasks bounds a grid's size, checked before the tasks are built.
const maxTasks = 1_000_000

// ReadGrid reads a grid from a JSON file (see Grid).
func ReadGrid(path string) (*Grid, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sweep: reading grid: %w", err)
	}
	g, err := ParseGrid(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return g, nil
}

// ParseGrid parses the JSON form of a grid (see Grid) and checks it.
func ParseGrid(b []byte) (*Grid, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	var g Grid
	if err := dec.Decode(&g); err != nil {
		if se, ok := err.(*json.SyntaxError); ok {
			line := 1 + bytes.Count(b[:min(int(se.Offset), len(b))], []byte("\n"))
			return nil, fmt.Errorf("sweep: grid: line %d: %w", line, err)
		}
		return nil, fmt.Errorf("sweep: grid: %w", err)
	}
	if _, err := g.Tasks(); err != nil {
		return nil, err
	}
	return &g, nil
}

// Names returns the parameter names in column order: the axes', then the
// seed's.
func (g *Grid) Names() []string {
	var names []string
	for _, a := range g.Axes {
		if len(a.Zip) > 0 {
			for _, z := range a.Zip {
				names = append(names, z.Name)
			}
			continue
		}
		names = append(names, a.Name)
	}
	if g.Seeds != nil {
		names = append(names, g.seedName())
	}
	return names
}

// SeedName returns the name of the repeated-seed parameter, "" without seeds.
func (g *Grid) SeedName() string {
	if g.Seeds == nil {
		return ""
	}
	return g.seedName()
}

func (g *Grid) seedName() string {
	if g.Seeds.Name == "" {
		return "seed"
	}
	return g.Seeds.Name
}

// column is one expanded axis: names stepped together and their values.
type column struct {
	names  []string
	values [][]any // values[k][j]: point k of name j
}

// Tasks expands the grid into one parameter set per task, in task order.
func (g *Grid) Tasks() ([]Params, error) {
	if len(g.Axes) == 0 && g.Seeds == nil {
		return nil, fmt.Errorf("sweep: grid: no axes and no seeds")
	}
	var cols []column
	seen := map[string]bool{}
	total := 1
	for i, a := range g.Axes {
		c, err := expandAxis(a, fmt.Sprintf("axes[%d]", i), true)
		if err != nil {
			return nil, err
		}
		for _, n := range c.names {
			if seen[n] {
				return nil, fmt.Errorf("sweep: grid: axes[%d]: parameter %q appears twice", i, n)
			}
			seen[n] = true
		}
		total *= len(c.values)
		if total > maxTasks {
			return nil, fmt.Errorf("sweep: grid: more than %d tasks", maxTasks)
		}
		cols = append(cols, c)
	}
	if s := g.Seeds; s != nil {
		if s.Count < 1 {
			return nil, fmt.Errorf("sweep: grid: seeds: count %d, want ≥ 1", s.Count)
		}
		name := g.seedName()
		if err := checkName(name, "seeds"); err != nil {
			return nil, err
		}
		if seen[name] {
			return nil, fmt.Errorf("sweep: grid: seeds: parameter %q is also an axis", name)
		}
		from := s.From
		if from == 0 {
			from = 1
		}
		c := column{names: []string{name}}
		for k := range s.Count {
			c.values = append(c.values, []any{int64(from + k)})
		}
		total *= s.Count
		if total > maxTasks {
			return nil, fmt.Errorf("sweep: grid: more than %d tasks", maxTasks)
		}
		cols = append(cols, c)
	}
	tasks := make([]Params, 0, total)
	idx := make([]int, len(cols))
	for range total {
		p := Params{}
		for c, k := range idx {
			for j, n := range cols[c].names {
				p[n] = cols[c].values[k][j]
			}
		}
		tasks = append(tasks, p)
		for c := len(idx) - 1; c >= 0; c-- {
			idx[c]++
			if idx[c] < len(cols[c].values) {
				break
			}
			idx[c] = 0
		}
	}
	return tasks, nil
}

func checkName(name, where string) error {
	if name == "" {
		return fmt.Errorf("sweep: grid: %s: missing name", where)
	}
	if strings.ContainsAny(name, " \t\n,\"") {
		return fmt.Errorf("sweep: grid: %s: parameter name %q has a space, comma or quote", where, name)
	}
	return nil
}

// expandAxis lists an axis's points; zip axes may only appear at the top.
func expandAxis(a Axis, where string, top bool) (column, error) {
	if len(a.Zip) > 0 {
		if !top {
			return column{}, fmt.Errorf("sweep: grid: %s: zip inside zip", where)
		}
		if a.Name != "" || a.Values != nil || a.Logspace != nil || a.Linspace != nil || a.Range != nil {
			return column{}, fmt.Errorf("sweep: grid: %s: a zip axis has only \"zip\"", where)
		}
		var c column
		for j, z := range a.Zip {
			zc, err := expandAxis(z, fmt.Sprintf("%s.zip[%d]", where, j), false)
			if err != nil {
				return column{}, err
			}
			if j == 0 {
				c.values = make([][]any, len(zc.values))
			} else if len(zc.values) != len(c.values) {
				return column{}, fmt.Errorf("sweep: grid: %s.zip[%d] (%s): %d values, zip[0] (%s) has %d", where, j, z.Name, len(zc.values), a.Zip[0].Name, len(c.values))
			}
			c.names = append(c.names, zc.names...)
			for k := range zc.values {
				c.values[k] = append(c.values[k], zc.values[k][0])
			}
		}
		return c, nil
	}
	if err := checkName(a.Name, where); err != nil {
		return column{}, err
	}
	where = fmt.Sprintf("%s (%s)", where, a.Name)
	kinds := 0
	for _, set := range []bool{a.Values != nil, a.Logspace != nil, a.Linspace != nil, a.Range != nil} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return column{}, fmt.Errorf("sweep: grid: %s: give exactly one of values, logspace, linspace, range", where)
	}
	c := column{names: []string{a.Name}}
	add := func(v any) { c.values = append(c.values, []any{v}) }
	switch {
	case a.Values != nil:
		if len(a.Values) == 0 {
			return column{}, fmt.Errorf("sweep: grid: %s: empty values", where)
		}
		for k, v := range a.Values {
			nv, err := normalize(v)
			if err != nil {
				return column{}, fmt.Errorf("sweep: grid: %s: values[%d]: %w", where, k, err)
			}
			add(nv)
		}
	case a.Logspace != nil, a.Linspace != nil:
		s, log := a.Linspace, false
		if a.Logspace != nil {
			s, log = a.Logspace, true
		}
		if s.Num < 1 || s.Num > maxTasks {
			return column{}, fmt.Errorf("sweep: grid: %s: num %d, want 1 to %d", where, s.Num, maxTasks)
		}
		if log && (s.From <= 0 || s.To <= 0) {
			return column{}, fmt.Errorf("sweep: grid: %s: logspace from %g to %g: both ends must be > 0", where, s.From, s.To)
		}
		for k := range s.Num {
			t := 0.0
			if s.Num > 1 {
				t = float64(k) / float64(s.Num-1)
			}
			if log {
				add(math.Exp(math.Log(s.From) + t*(math.Log(s.To)-math.Log(s.From))))
			} else {
				add(s.From + t*(s.To-s.From))
			}
		}
	case a.Range != nil:
		r := *a.Range
		if r.Step == 0 {
			r.Step = 1
		}
		if (r.Step > 0 && r.To < r.From) || (r.Step < 0 && r.To > r.From) {
			return column{}, fmt.Errorf("sweep: grid: %s: range from %d to %d with step %d is empty", where, r.From, r.To, r.Step)
		}
		if n := (r.To-r.From)/r.Step + 1; n > maxTasks {
			return column{}, fmt.Errorf("sweep: grid: %s: range has %d values, more than %d", where, n, maxTasks)
		}
		for v := r.From; (r.Step > 0 && v <= r.To) || (r.Step < 0 && v >= r.To); v += r.Step {
			add(int64(v))
		}
	}
	return c, nil
}

// normalize turns a decoded JSON value into a parameter value: int64,
// float64, string or bool.
func normalize(v any) (any, error) {
	switch x := v.(type) {
	case json.Number:
		s := string(x)
		if !strings.ContainsAny(s, ".eE") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return i, nil
			}
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("number %s: %w", s, err)
		}
		return f, nil
	case string, bool, int64, float64:
		return x, nil
	case int:
		return int64(x), nil
	}
	return nil, fmt.Errorf("%v (%T) is not a number, string or boolean", v, v)
}
