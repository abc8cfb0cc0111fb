// Package display shows rich values in a Harmonium notebook: HTML, Markdown,
// LaTeX, JSON, images, plots, heat maps with colour bars, matrices and tables
// (a Reproduction table compares a paper's values with a run's), updatable in
// place, plus a progress bar that draws in Jupyter or on a terminal, and the
// notebook size switch HARMONIUM_SCALE (ScaleFromEnv).
//
// It is preloaded in every notebook cell (no import needed). Outside a session
// (plain compiled Go) every function is a no-op that still returns valid values,
// so code written in a notebook also runs as a program.
//
//	h := display.Show(p)          // p is a *plot.Plot: a sharp PNG
//	h.Update(p2)                  // replaces it in place
//	display.Markdown("**done**")
//	bar := display.NewProgress("training", 100)
//	train.Fit(ctx, m, data, train.PCD{}, nil, train.Options{Progress: bar.Func()}) // any func(done, total int)
//	bar.Phase("epoch 3: measuring held-out likelihood") // what runs now
package display

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
)

// Sink receives what the display functions produce. The notebook session
// installs one with SetSink; nobody else needs to.
type Sink interface {
	// Display publishes a MIME bundle; id is the display id (never empty);
	// update replaces an earlier display with the same id.
	Display(data, metadata map[string]any, id string, update bool)
	// Clear clears the output of the current cell (after the next output if wait).
	Clear(wait bool)
	// Progress draws a progress bar in state st; id is stable for one bar.
	Progress(id string, st ProgressState)
}

var (
	sinkMu sync.RWMutex
	sink   Sink
	nextID atomic.Int64
)

// SetSink installs s as the destination of all display output and returns the
// previously installed sink (nil if none). A nil s discards output.
func SetSink(s Sink) Sink {
	sinkMu.Lock()
	defer sinkMu.Unlock()
	old := sink
	sink = s
	return old
}

func currentSink() Sink {
	sinkMu.RLock()
	defer sinkMu.RUnlock()
	return sink
}

func newID() string {
	return "hm-" + strconv.FormatInt(nextID.Add(1), 10)
}

// Handle identifies one displayed output, so it can be replaced in place.
type Handle struct {
	id string
}

// ID returns the Jupyter display id of h.
func (h *Handle) ID() string { return h.id }

// Update replaces the output shown by h with the rendering of v.
func (h *Handle) Update(v any) {
	publish(h.id, Bundle(v), true)
}

// String describes h, so a Handle left as a cell's value prints tidily.
func (h *Handle) String() string { return "display.Handle(" + h.id + ")" }

func publish(id string, b MIMEBundle, update bool) {
	if s := currentSink(); s != nil {
		data, meta := Split(b)
		s.Display(data, meta, id, update)
	}
}

// Split separates a bundle made by Bundle into the data and the metadata
// (e.g. the logical size of a plot's PNG) of a Jupyter display message. The
// metadata map is never nil.
func Split(b MIMEBundle) (data, metadata map[string]any) {
	data = map[string]any{}
	for k, v := range b {
		data[k] = v
	}
	metadata, _ = data[metadataKey].(map[string]any)
	delete(data, metadataKey)
	if metadata == nil {
		metadata = map[string]any{}
	}
	return data, metadata
}

// Show displays v with its richest rendering (see Bundle) and returns a Handle
// to update it later.
func Show(v any) *Handle {
	h := &Handle{id: newID()}
	publish(h.id, Bundle(v), false)
	return h
}

// HTML displays an HTML fragment.
func HTML(s string) *Handle { return Show(MIMEBundle{"text/html": s, "text/plain": "<HTML>"}) }

// Markdown displays Markdown text.
func Markdown(s string) *Handle { return Show(MIMEBundle{"text/markdown": s, "text/plain": s}) }

// LaTeX displays LaTeX math, e.g. `$E = -\sum_{ij} v_i W_{ij} h_j$`.
func LaTeX(s string) *Handle { return Show(MIMEBundle{"text/latex": s, "text/plain": s}) }

// JSON displays v (any value encoding/json accepts) as an interactive JSON tree.
func JSON(v any) *Handle {
	return Show(MIMEBundle{"application/json": v, "text/plain": fmt.Sprintf("%v", v)})
}

// PNG displays PNG-encoded image bytes.
func PNG(b []byte) *Handle { return Show(MIMEBundle{"image/png": b, "text/plain": "<PNG image>"}) }

// JPEG displays JPEG-encoded image bytes.
func JPEG(b []byte) *Handle { return Show(MIMEBundle{"image/jpeg": b, "text/plain": "<JPEG image>"}) }

// SVG displays an SVG document.
func SVG(s string) *Handle { return Show(MIMEBundle{"image/svg+xml": s, "text/plain": "<SVG image>"}) }

// Clear clears the current cell's output; with wait it clears only when the
// next output arrives (no flicker when redrawing).
func Clear(wait bool) {
	if s := currentSink(); s != nil {
		s.Clear(wait)
	}
}
