package sweep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Params are one task's parameters by name. Values are int64, float64,
// string or bool. In JSON a float is always written with a fraction or an
// exponent, so it reads back as a float.
type Params map[string]any

// MarshalJSON writes the parameters with their keys sorted.
func (p Params) MarshalJSON() ([]byte, error) {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := marshalValue(p[k])
		if err != nil {
			return nil, fmt.Errorf("parameter %q: %w", k, err)
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func marshalValue(v any) ([]byte, error) {
	if f, ok := v.(float64); ok {
		return []byte(formatFloat(f)), nil
	}
	return json.Marshal(v)
}

// formatFloat writes f so that it reads back as a float (1 → 1.0); NaN and
// infinities, which JSON lacks, as the strings "NaN", "+Inf", "-Inf".
func formatFloat(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return strconv.Quote(strconv.FormatFloat(f, 'g', -1, 64))
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}

// UnmarshalJSON reads parameters, telling ints from floats as ParseGrid does.
func (p *Params) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return err
	}
	*p = Params{}
	for k, v := range m {
		nv, err := normalize(v)
		if err != nil {
			return fmt.Errorf("parameter %q: %w", k, err)
		}
		(*p)[k] = nv
	}
	return nil
}

// jsonFloat is a float64 whose JSON form can hold NaN and ±Inf (as strings).
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) { return []byte(formatFloat(float64(f))), nil }

func (f *jsonFloat) UnmarshalJSON(b []byte) error {
	s := string(b)
	if unq, err := strconv.Unquote(s); err == nil {
		s = unq
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("sweep: %s is not a number", b)
	}
	*f = jsonFloat(v)
	return nil
}

// formatParam writes a parameter value for tables and messages.
func formatParam(v any) string {
	switch x := v.(type) {
	case float64:
		return strconv.FormatFloat(x, 'g', 6, 64)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// paramFloat converts a numeric parameter to float64.
func paramFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return math.NaN(), false
}
