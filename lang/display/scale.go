package display

import (
	"fmt"
	"os"
)

// Scale is the size at which a notebook runs its experiments, chosen by the
// environment variable HARMONIUM_SCALE:
//
//	quick  sizes for continuous integration: the whole notebook in seconds
//	full   the largest sizes that run on a two-core machine in ≤ 15 minutes
//	paper  the sizes of the paper being reproduced
//
// A notebook reads it once, in its first code cell, and derives every size
// parameter from it with Int or Float.
type Scale string

// The scales a notebook runs at.
const (
	Quick Scale = "quick"
	Full  Scale = "full"
	Paper Scale = "paper"
)

// ScaleFromEnv returns the scale named by HARMONIUM_SCALE. When it is unset,
// a non-empty HARMONIUM_QUICK (the older switch of the test suite) selects
// Quick, and otherwise the scale is Full. An unknown name is an error that
// names the variable and its value.
func ScaleFromEnv() (Scale, error) {
	v, set := os.LookupEnv("HARMONIUM_SCALE")
	if !set || v == "" {
		if os.Getenv("HARMONIUM_QUICK") != "" {
			return Quick, nil
		}
		return Full, nil
	}
	switch s := Scale(v); s {
	case Quick, Full, Paper:
		return s, nil
	}
	return "", fmt.Errorf("display: HARMONIUM_SCALE=%q: want quick, full or paper", v)
}

// Int returns the value of a size parameter at scale s: quick, full or paper.
// An unknown scale gets the full value.
func (s Scale) Int(quick, full, paper int) int {
	switch s {
	case Quick:
		return quick
	case Paper:
		return paper
	}
	return full
}

// Float is Int for a real-valued parameter.
func (s Scale) Float(quick, full, paper float64) float64 {
	switch s {
	case Quick:
		return quick
	case Paper:
		return paper
	}
	return full
}
