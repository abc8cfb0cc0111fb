package display

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// fakeClock is a clock the test advances by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newFakeBar(t *testing.T, label string, total int) (*Progress, *fakeClock, *sinkRecorder) {
	t.Helper()
	r := withSink(t)
	c := &fakeClock{t: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}
	return newProgress(label, total, c.now), c, r
}

// TestProgressRateETA checks the figures against hand computation: 450 of
// 1000 steps in 12.5 s is 36 steps/s, and the 550 left take 550/36 = 15.28 s.
func TestProgressRateETA(t *testing.T) {
	p, c, _ := newFakeBar(t, "training", 1000)
	c.advance(12500 * time.Millisecond)
	p.Set(450)
	st := p.State()
	if got, want := st.Rate(), 450/12.5; abs(got-want) > 1e-9 {
		t.Errorf("Rate = %v, want %v", got, want)
	}
	rem, ok := st.Remaining()
	if want := 15277777777 * time.Nanosecond; !ok || absDur(rem-want) > time.Millisecond {
		t.Errorf("Remaining = %v, %v; want %v", rem, ok, want)
	}
	if got, want := st.Fraction(), 0.45; abs(got-want) > 1e-12 {
		t.Errorf("Fraction = %v, want %v", got, want)
	}
	if got, want := st.Text(20), "training  45% [#########...........] 450/1000 [00:12<00:15, 36.0 it/s]"; got != want {
		t.Errorf("Text =\n%q, want\n%q", got, want)
	}
}

func TestProgressSlowRateAndUnknownTotal(t *testing.T) {
	p, c, _ := newFakeBar(t, "AIS", 0)
	if got, want := p.String(), "AIS 0 [00:00, ? it/s]"; got != want {
		t.Errorf("before any step: %q, want %q", got, want)
	}
	c.advance(5 * time.Second)
	p.Set(2)
	if got, want := p.State().Text(10), "AIS 2 [00:05, 2.50 s/it]"; got != want {
		t.Errorf("unknown total: %q, want %q", got, want)
	}
	if _, ok := p.State().Remaining(); ok {
		t.Error("Remaining is known without a total")
	}
	c.advance(time.Hour)
	if got, want := p.State().Stats(), "2 [1:00:05, 1802.50 s/it]"; got != want {
		t.Errorf("Stats after an hour: %q, want %q", got, want)
	}
}

// TestProgressThrottle checks that a tight loop redraws at most ten times a
// second, and that the last step and phase changes are always drawn.
func TestProgressThrottle(t *testing.T) {
	p, c, r := newFakeBar(t, "loop", 10000)
	f := p.Func()
	for i := 1; i <= 10000; i++ {
		c.advance(100 * time.Microsecond) // 10,000 steps in one second
		f(i, 10000)
	}
	// The first draw at creation, one per 100 ms, the final one.
	if n := len(r.progress); n < 10 || n > 12 {
		t.Errorf("%d redraws in one second of updates, want about 11", n)
	}
	last := r.progress[len(r.progress)-1]
	if last.Done != 10000 || last.Fraction() != 1 {
		t.Errorf("last redraw %+v, want the completed bar", last)
	}
	n := len(r.progress)
	c.advance(progressInterval)
	p.Phase("epoch 3: measuring held-out likelihood")
	p.Phase("epoch 3: measuring held-out likelihood") // unchanged: not redrawn
	if len(r.progress) != n+1 || r.progress[n].Phase != "epoch 3: measuring held-out likelihood" {
		t.Fatalf("phase change drew %d times (%+v)", len(r.progress)-n, r.progress[n:])
	}
	if !strings.HasSuffix(r.progress[n].Text(10), " · epoch 3: measuring held-out likelihood") {
		t.Errorf("phase missing from %q", r.progress[n].Text(10))
	}
	if h := r.progress[n].HTML(); !strings.Contains(h, "measuring held-out likelihood") || !strings.Contains(h, `value="10000" max="10000"`) {
		t.Errorf("HTML = %q", h)
	}
	p.Done()
	if last := r.progress[len(r.progress)-1]; last.Phase != "" {
		t.Errorf("Done keeps the phase %q", last.Phase)
	}
}

// TestProgressPhaseThrottle checks that phases changing faster than ten a
// second are drawn late rather than each at once, and that the last one is
// drawn.
func TestProgressPhaseThrottle(t *testing.T) {
	p, _, r := newFakeBar(t, "fit", 10)
	for e := 1; e <= 50; e++ { // the fake clock stands still: all within 100 ms
		p.Phase(fmt.Sprintf("epoch %d: measuring held-out likelihood", e))
	}
	r.mu.Lock()
	early := len(r.progress)
	r.mu.Unlock()
	if early != 1 { // the draw at creation only
		t.Errorf("%d redraws right after 50 phase changes, want 1", early)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		r.mu.Lock()
		n := len(r.progress)
		var last ProgressState
		if n > 0 {
			last = r.progress[n-1]
		}
		r.mu.Unlock()
		if n == 2 && last.Phase == "epoch 50: measuring held-out likelihood" {
			break
		}
		if n > 2 || time.Now().After(deadline) {
			t.Fatalf("%d redraws, last phase %q; want one deferred redraw of epoch 50", n, last.Phase)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestProgressHTMLEscapes(t *testing.T) {
	st := ProgressState{Label: "a<b", Phase: "x&y", Done: 1, Total: 2, Elapsed: time.Second}
	h := st.HTML()
	for _, want := range []string{"a&lt;b", "x&amp;y", `value="1" max="2"`, "50%", "1/2 [00:01&lt;00:01, 1.0 it/s]"} {
		if !strings.Contains(h, want) {
			t.Errorf("HTML lacks %q: %s", want, h)
		}
	}
}

func abs(x float64) float64 { return max(x, -x) }

func absDur(d time.Duration) time.Duration { return max(d, -d) }

func ExampleProgressState_Text() {
	st := ProgressState{Label: "training", Done: 5, Total: 10, Elapsed: 2 * time.Second, Phase: "epoch 1: measuring held-out likelihood"}
	fmt.Println(st.Text(20))
	// Output: training  50% [##########..........] 5/10 [00:02<00:02, 2.5 it/s] · epoch 1: measuring held-out likelihood
}
