package lang

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is an Output that keeps everything a cell produced.
type recorder struct {
	mu       sync.Mutex
	stdout   strings.Builder
	stderr   strings.Builder
	displays []map[string]any
	updates  []map[string]any
	ids      []string
	clears   int
}

func (r *recorder) Stream(name, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if name == "stdout" {
		r.stdout.WriteString(text)
	} else {
		r.stderr.WriteString(text)
	}
}

func (r *recorder) Display(data, _, transient map[string]any, update bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id, _ := transient["display_id"].(string)
	if update {
		r.updates = append(r.updates, data)
	} else {
		r.displays = append(r.displays, data)
		r.ids = append(r.ids, id)
	}
}

func (r *recorder) ClearOutput(bool) { r.mu.Lock(); r.clears++; r.mu.Unlock() }

func (r *recorder) Input(string, bool) (string, error) { return "42", nil }

var (
	sharedOnce sync.Once
	shared     *Session
)

// session returns a fresh session; building one is costly, so tests that do
// not depend on an empty namespace share one through sharedSession.
func newSession(t *testing.T) *Session {
	t.Helper()
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func sharedSession(t *testing.T) *Session {
	t.Helper()
	sharedOnce.Do(func() {
		s, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		shared = s
	})
	return shared
}

// run executes code and returns what it printed and its result.
func run(t *testing.T, s *Session, code string) (*recorder, Result) {
	t.Helper()
	rec := &recorder{}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res := s.Execute(ctx, code, rec)
	return rec, res
}

// mustRun executes code, failing the test on an error.
func mustRun(t *testing.T, s *Session, code string) (*recorder, Result) {
	t.Helper()
	rec, res := run(t, s, code)
	if res.Err != nil {
		t.Fatalf("cell %q failed: %s: %s\n%s\nstderr: %s", code, res.Err.Name, res.Err.Value, strings.Join(res.Err.Traceback, "\n"), rec.stderr.String())
	}
	return rec, res
}

func plain(res Result) string {
	if res.Data == nil {
		return ""
	}
	s, _ := res.Data["text/plain"].(string)
	return s
}
