package rbm

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// LayerKind describes a kind of layer to the registry: how model files name
// it and how to make one. Each layer file registers its kind in an init
// function, so model files, NewLayer and the tests that run over every kind
// know it without a list elsewhere.
type LayerKind struct {
	// Name is the kind as model files store it and Layer.Kind returns it.
	Name string
	// New returns a layer of n units with default parameters. q is the
	// number of colours per unit for kinds with Colours and 0 otherwise.
	New func(n, q int) (Layer, error)
	// Colours reports that the kind has a number of colours q per unit
	// (one-hot coded, as Potts units): model files then store "q" and
	// New receives it. It must be true exactly when the kind's layers
	// have States() > 1. The zero value means scalar units.
	Colours bool
}

var registry = struct {
	sync.RWMutex
	kinds map[string]LayerKind
}{kinds: map[string]LayerKind{}}

// RegisterLayer makes a layer kind known to NewLayer and the model-file
// readers. It is meant to be called from an init function. A kind with an
// empty name or a nil New, or a name already registered, is an error.
func RegisterLayer(k LayerKind) error {
	if k.Name == "" || k.New == nil {
		return fmt.Errorf("rbm: RegisterLayer: kind %q needs a name and a New function", k.Name)
	}
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.kinds[k.Name]; dup {
		return fmt.Errorf("rbm: RegisterLayer: layer kind %q is already registered", k.Name)
	}
	registry.kinds[k.Name] = k
	return nil
}

// mustRegister registers one of the package's own kinds; a failure is a
// programming error caught by every test run.
func mustRegister(k LayerKind) {
	if err := RegisterLayer(k); err != nil {
		panic(err)
	}
}

// LayerKinds returns the names of the registered layer kinds, sorted.
func LayerKinds() []string {
	registry.RLock()
	names := make([]string, 0, len(registry.kinds))
	for name := range registry.kinds {
		names = append(names, name)
	}
	registry.RUnlock()
	sort.Strings(names)
	return names
}

// lookupKind returns the registered kind of the given name.
func lookupKind(name string) (LayerKind, bool) {
	registry.RLock()
	defer registry.RUnlock()
	k, ok := registry.kinds[name]
	return k, ok
}

// NewLayer returns a layer of the given registered kind with n units (q
// colours per unit for kinds with colours, such as potts; ignored
// otherwise) and default parameters.
func NewLayer(kind string, n, q int) (Layer, error) {
	if n < 0 {
		return nil, fmt.Errorf("rbm: layer size %d is negative", n)
	}
	k, ok := lookupKind(kind)
	if !ok {
		return nil, fmt.Errorf("rbm: unknown layer kind %q (want one of %s)", kind, strings.Join(LayerKinds(), ", "))
	}
	if !k.Colours {
		q = 0
	}
	return k.New(n, q)
}
