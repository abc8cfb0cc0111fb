package display

import (
	"sync"
	"time"
)

// Progress is a progress bar: an HTML bar updated in place in Jupyter, a text
// bar on the terminal under `harmonium run`. Updates are throttled, so calling
// Set in a tight loop is cheap.
type Progress struct {
	Label string

	mu    sync.Mutex
	id    string
	total int
	done  int
	last  time.Time
}

// progressInterval is the minimum time between two redraws.
const progressInterval = 100 * time.Millisecond

// NewProgress creates and draws a progress bar for total steps.
func NewProgress(label string, total int) *Progress {
	p := &Progress{Label: label, id: newID(), total: total}
	p.draw()
	return p
}

// Set records that done of the total steps are finished and redraws the bar
// (at most every 100 ms, and always at the end).
func (p *Progress) Set(done int) {
	p.mu.Lock()
	p.done = done
	now := time.Now()
	if done < p.total && now.Sub(p.last) < progressInterval {
		p.mu.Unlock()
		return
	}
	p.last = now
	p.mu.Unlock()
	p.draw()
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

// Done marks the bar finished.
func (p *Progress) Done() {
	p.mu.Lock()
	p.done = p.total
	p.mu.Unlock()
	p.draw()
}

func (p *Progress) draw() {
	p.mu.Lock()
	id, label, done, total := p.id, p.Label, p.done, p.total
	p.mu.Unlock()
	if s := currentSink(); s != nil {
		s.Progress(id, label, done, total)
	}
}

// String reports the state of the bar as text.
func (p *Progress) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return ProgressText(p.Label, p.done, p.total, 30)
}

// ProgressText draws a text bar of the given width, e.g.
// "training [#######.......]  50% 5/10".
func ProgressText(label string, done, total, width int) string {
	frac := 0.0
	if total > 0 {
		frac = float64(done) / float64(total)
	}
	frac = min(max(frac, 0), 1)
	n := int(frac * float64(width))
	bar := make([]byte, width)
	for i := range bar {
		bar[i] = '.'
		if i < n {
			bar[i] = '#'
		}
	}
	return label + " [" + string(bar) + "] " + padPercent(int(frac*100)) + "% " + itoa(done) + "/" + itoa(total)
}

// ProgressHTML draws an HTML progress bar.
func ProgressHTML(label string, done, total int) string {
	return "<div class=\"hm-progress\"><span>" + htmlEscape(label) + "</span> <progress value=\"" + itoa(done) +
		"\" max=\"" + itoa(max(total, 1)) + "\" style=\"width:40%\"></progress> " + itoa(done) + "/" + itoa(total) + "</div>"
}
