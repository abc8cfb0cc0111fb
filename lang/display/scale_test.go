package display

import "testing"

func TestScaleFromEnv(t *testing.T) {
	for _, c := range []struct {
		scale, quick string
		want         Scale
		err          string
	}{
		{"", "", Full, ""},
		{"", "1", Quick, ""},
		{"paper", "1", Paper, ""},
		{"quick", "", Quick, ""},
		{"full", "", Full, ""},
		{"huge", "", "", `display: HARMONIUM_SCALE="huge": want quick, full or paper`},
	} {
		t.Setenv("HARMONIUM_SCALE", c.scale)
		t.Setenv("HARMONIUM_QUICK", c.quick)
		got, err := ScaleFromEnv()
		if got != c.want || (err == nil) != (c.err == "") || (err != nil && err.Error() != c.err) {
			t.Errorf("SCALE=%q QUICK=%q: %q, %v", c.scale, c.quick, got, err)
		}
	}
	if Quick.Int(1, 2, 3) != 1 || Full.Int(1, 2, 3) != 2 || Paper.Int(1, 2, 3) != 3 || Paper.Float(0.1, 0.2, 0.3) != 0.3 || Quick.Float(0.1, 0.2, 0.3) != 0.1 {
		t.Errorf("Int/Float pick the wrong value")
	}
}
