package sweep

import (
	"fmt"
	"html"
	"sync"
	"time"

	"github.com/harmonium-rbm/harmonium/lang/display"
)

// reporter passes a sweep's progress to the user's callback and, in a
// notebook, to a display updated in place (throttled).
type reporter struct {
	dir      string
	callback func(Status)

	mu     sync.Mutex
	handle *display.Handle
	last   Status
	shown  time.Time
}

// displayEvery is the minimum time between two redraws of the display.
const displayEvery = 500 * time.Millisecond

func newReporter(dir string, callback func(Status)) *reporter {
	return &reporter{dir: dir, callback: callback}
}

// update reports st if it changed, or if the last report is old.
func (r *reporter) update(st Status) { r.report(st, false) }

// finish reports the final state.
func (r *reporter) finish(st Status) { r.report(st, true) }

func (r *reporter) report(st Status, final bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	changed := st.Done != r.last.Done || st.Running != r.last.Running || st.Failed != r.last.Failed || st.Queued != r.last.Queued
	if since := time.Since(r.shown); !final && (changed && since < displayEvery || !changed && since < 5*time.Second) {
		return
	}
	r.last, r.shown = st, time.Now()
	if r.callback != nil {
		r.callback(st)
	}
	b := display.MIMEBundle{"text/html": statusHTML(r.dir, st), "text/plain": "sweep " + r.dir + ": " + st.String()}
	if r.handle == nil {
		r.handle = display.Show(b)
		return
	}
	r.handle.Update(b)
}

// statusHTML draws a sweep's progress: a bar and the counts.
func statusHTML(dir string, st Status) string {
	return fmt.Sprintf(`<div class="hm-sweep"><b>sweep</b> <code>%s</code> <progress value="%d" max="%d" style="width:30%%"></progress> %s</div>`,
		html.EscapeString(dir), st.Done, max(st.Total, 1), html.EscapeString(st.String()))
}
