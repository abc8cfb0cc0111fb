package display

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// Progress is a progress bar in the manner of Python's tqdm: percent, count,
// elapsed time, rate and estimated time left, plus an optional phase label
// saying what runs now ("epoch 3: measuring held-out likelihood"). It is an
// HTML bar updated in place in Jupyter and a text bar on the terminal under
// `harmonium run`. Redraws are throttled to ten a second, so calling Set in
// a tight loop is cheap.
//
// The callbacks it hands out are plain functions, so compiled code reports
// to it without knowing about notebooks:
//
//	bar := display.NewProgress("training", 0)
//	trainer.Progress = bar.Func() // func(done, total int)
//	bar.Phase("epoch 3: measuring held-out likelihood")
//
// An API that announces its phases through a func(phase string) hook takes
// bar.PhaseFunc().
type Progress struct {
	// Label names the bar; it is read at each redraw.
	Label string

	now func() time.Time // the clock (tests use a fake one)

	mu       sync.Mutex
	id       string
	start    time.Time
	total    int
	done     int
	phase    string
	last     time.Time // of the last redraw
	deferred bool      // a redraw for a phase change is scheduled
}

// progressInterval is the minimum time between two redraws.
const progressInterval = 100 * time.Millisecond

// NewProgress creates and draws a progress bar for total steps; a total of 0
// means unknown until a Func callback reports it.
func NewProgress(label string, total int) *Progress {
	return newProgress(label, total, time.Now)
}

func newProgress(label string, total int, now func() time.Time) *Progress {
	p := &Progress{Label: label, id: newID(), total: total, now: now, start: now()}
	p.redraw(true)
	return p
}

// Set records that done of the total steps are finished and redraws the bar
// (at most every 100 ms, and always when done reaches the total).
func (p *Progress) Set(done int) {
	p.mu.Lock()
	p.done = done
	p.mu.Unlock()
	p.redraw(false)
}

// Func returns a callback func(done, total int) for APIs that report
// progress that way (the rbmcore trainers and samplers).
func (p *Progress) Func() func(done, total int) {
	return func(done, total int) {
		p.mu.Lock()
		p.total = total
		p.mu.Unlock()
		p.Set(done)
	}
}

// Phase shows what runs now beside the bar, e.g. "epoch 3: measuring
// held-out likelihood", so a long phase that makes no step of progress is
// labelled while it runs. An empty phase removes the label. A change is
// drawn at once, or, if the bar was drawn less than 100 ms ago, as soon as
// that interval has passed: phases changing faster than that still cost at
// most ten redraws a second, and the phase that lasts is always shown.
func (p *Progress) Phase(phase string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.phase == phase {
		return
	}
	p.phase = phase
	wait := progressInterval - p.now().Sub(p.last)
	switch {
	case p.deferred:
		// The pending redraw shows the latest phase.
	case wait <= 0:
		p.mu.Unlock()
		p.redraw(true)
		p.mu.Lock()
	default:
		p.deferred = true
		time.AfterFunc(wait, func() {
			p.mu.Lock()
			p.deferred = false
			p.mu.Unlock()
			p.redraw(true)
		})
	}
}

// PhaseFunc returns Phase as a plain func(phase string) callback, the hook
// for APIs that announce their phases.
func (p *Progress) PhaseFunc() func(phase string) { return p.Phase }

// Done marks the bar finished and removes the phase label.
func (p *Progress) Done() {
	p.mu.Lock()
	if p.total > 0 {
		p.done = p.total
	}
	p.phase = ""
	p.mu.Unlock()
	p.redraw(true)
}

// redraw draws the bar if force, if the last redraw is at least
// progressInterval old, or if the bar just completed.
func (p *Progress) redraw(force bool) {
	p.mu.Lock()
	now := p.now()
	if !force && (p.total <= 0 || p.done < p.total) && now.Sub(p.last) < progressInterval {
		p.mu.Unlock()
		return
	}
	p.last = now
	id, st := p.id, p.stateLocked(now)
	p.mu.Unlock()
	if s := currentSink(); s != nil {
		s.Progress(id, st)
	}
}

// State returns what the bar shows now.
func (p *Progress) State() ProgressState {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stateLocked(p.now())
}

func (p *Progress) stateLocked(now time.Time) ProgressState {
	return ProgressState{Label: p.Label, Phase: p.phase, Done: p.done, Total: p.total, Elapsed: now.Sub(p.start)}
}

// String reports the state of the bar as text.
func (p *Progress) String() string { return p.State().Text(30) }

// ProgressState is one drawing of a progress bar: what a Sink receives.
// The rate is Done/Elapsed, the average since the bar was created.
type ProgressState struct {
	Label, Phase string
	// Done of Total steps are finished; a Total of 0 or less is unknown.
	Done, Total int
	// Elapsed is the time since the bar was created.
	Elapsed time.Duration
}

// Fraction is Done/Total clamped to [0, 1], 0 when the total is unknown.
func (st ProgressState) Fraction() float64 {
	if st.Total <= 0 {
		return 0
	}
	return min(max(float64(st.Done)/float64(st.Total), 0), 1)
}

// Rate is the number of steps per second, 0 before any step or time.
func (st ProgressState) Rate() float64 {
	if st.Done <= 0 || st.Elapsed <= 0 {
		return 0
	}
	return float64(st.Done) / st.Elapsed.Seconds()
}

// Remaining estimates the time left at the average rate; ok is false when
// it cannot be estimated (unknown total, no step done yet).
func (st ProgressState) Remaining() (d time.Duration, ok bool) {
	r := st.Rate()
	if st.Total <= 0 || r == 0 {
		return 0, false
	}
	left := max(st.Total-st.Done, 0)
	return time.Duration(float64(left) / r * float64(time.Second)), true
}

// Stats is the tqdm-style tail of the bar: "450/1000 [00:12<00:15, 36.2 it/s]",
// or "450 [00:12, 36.2 it/s]" when the total is unknown.
func (st ProgressState) Stats() string {
	var sb strings.Builder
	sb.WriteString(itoa(st.Done))
	if st.Total > 0 {
		sb.WriteString("/" + itoa(st.Total))
	}
	sb.WriteString(" [" + clock(st.Elapsed))
	if st.Total > 0 {
		if d, ok := st.Remaining(); ok {
			sb.WriteString("<" + clock(d))
		} else {
			sb.WriteString("<?")
		}
	}
	sb.WriteString(", " + rateText(st.Rate()) + "]")
	return sb.String()
}

// Text draws the bar as text with a bar of the given width, e.g.
// "training  45% [#############.................] 450/1000 [00:12<00:15, 36.2 it/s] · epoch 3: measuring held-out likelihood".
// Without a known total the bar and percent are left out.
func (st ProgressState) Text(width int) string {
	var sb strings.Builder
	sb.WriteString(st.Label + " ")
	if st.Total > 0 {
		n := int(st.Fraction() * float64(width))
		sb.WriteString(padPercent(int(st.Fraction()*100)) + "% [" + strings.Repeat("#", n) + strings.Repeat(".", width-n) + "] ")
	}
	sb.WriteString(st.Stats())
	if st.Phase != "" {
		sb.WriteString(" · " + st.Phase)
	}
	return sb.String()
}

// HTML draws the bar as an HTML <progress> element with the same figures
// as Text and the phase on a second line.
func (st ProgressState) HTML() string {
	var sb strings.Builder
	sb.WriteString(`<div class="hm-progress"><span>` + htmlEscape(st.Label) + `</span> `)
	if st.Total > 0 {
		fmt.Fprintf(&sb, `<span>%s%%</span> <progress value="%d" max="%d" style="width:40%%"></progress> `,
			strings.TrimSpace(padPercent(int(st.Fraction()*100))), st.Done, st.Total)
	} else {
		sb.WriteString(`<progress style="width:40%"></progress> `)
	}
	sb.WriteString(`<span>` + htmlEscape(st.Stats()) + `</span>`)
	if st.Phase != "" {
		sb.WriteString(`<div class="hm-progress-phase"><i>` + htmlEscape(st.Phase) + `</i></div>`)
	}
	sb.WriteString(`</div>`)
	return sb.String()
}

// clock formats d as tqdm does, in whole seconds: mm:ss, or h:mm:ss from an hour on.
func clock(d time.Duration) string {
	s := int(d / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%02d:%02d", s/60, s%60)
}

// rateText formats a rate in steps per second as tqdm does: "36.2 it/s",
// or "2.50 s/it" below one step a second, "? it/s" when unknown.
func rateText(r float64) string {
	switch {
	case r <= 0:
		return "? it/s"
	case r < 1:
		return fmt.Sprintf("%.2f s/it", 1/r)
	case r < 100:
		return fmt.Sprintf("%.1f it/s", r)
	}
	return fmt.Sprintf("%.0f it/s", r)
}
