package rbm

import (
	"strings"
	"testing"
)

// TestRegistry: every kind of the package is registered under its Kind,
// makes layers of the requested size, and refuses what it should; bad
// registrations and unknown kinds are errors that name the kind.
func TestRegistry(t *testing.T) {
	want := []string{"binary", "doublewell", "drelu", "gaussian", "poisson", "potts", "relu", "spin", "truncexp"}
	kinds := LayerKinds()
	for _, k := range want {
		l, err := NewLayer(k, 3, 4)
		if err != nil {
			t.Fatalf("NewLayer(%q): %v", k, err)
		}
		if l.Kind() != k || l.Len() != 3 {
			t.Errorf("NewLayer(%q) made %s(%d)", k, l.Kind(), l.Len())
		}
		lk, _ := lookupKind(k)
		if lk.Colours != (l.States() > 1) {
			t.Errorf("%s: Colours = %v but States() = %d", k, lk.Colours, l.States())
		}
		if !strings.Contains(strings.Join(kinds, " "), k) {
			t.Errorf("LayerKinds() = %v lacks %q", kinds, k)
		}
	}
	if _, err := NewLayer("potts", 3, 1); err == nil {
		t.Error("potts with q = 1: no error")
	}
	if _, err := NewLayer("binary", -1, 0); err == nil {
		t.Error("negative size: no error")
	}
	if _, err := NewLayer("sigmoid", 3, 0); err == nil || !strings.Contains(err.Error(), `"sigmoid"`) || !strings.Contains(err.Error(), "truncexp") {
		t.Errorf("unknown kind: error %v, want it to name the kind and the known ones", err)
	}
	if err := RegisterLayer(LayerKind{Name: "binary", New: func(n, _ int) (Layer, error) { return Binary(n), nil }}); err == nil {
		t.Error("registering binary twice: no error")
	}
	if err := RegisterLayer(LayerKind{Name: "", New: func(n, _ int) (Layer, error) { return Binary(n), nil }}); err == nil {
		t.Error("empty kind name: no error")
	}
	if err := RegisterLayer(LayerKind{Name: "no-constructor"}); err == nil {
		t.Error("nil New: no error")
	}
}
