package kernel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

// HistoryEntry is one stored cell input.
type HistoryEntry struct {
	Session int    `json:"session"` // kernel session number, 1 for the first kernel ever started
	Line    int    `json:"line"`    // the cell's execution count; 0 marks a session start record
	Source  string `json:"source,omitempty"`
	Start   string `json:"start,omitempty"` // session start time, only on session records
}

// History stores the inputs of executed cells, per kernel session, in an
// append-only JSON-lines file so that history survives kernel restarts. It is
// safe for concurrent use.
type History struct {
	mu      sync.Mutex
	path    string // "" keeps history in memory only
	session int
	entries []HistoryEntry // in (session, line) order of appending, without session records
	skipped int            // unreadable lines skipped by OpenHistory
}

// maxHistorySource is the most of a cell's source that history stores. A
// longer cell (pasted data, a generated table) is stored truncated, with a
// note saying so, so that one huge cell bloats neither the file nor the
// memory of every later kernel.
const maxHistorySource = 1 << 20

// maxHistoryLine bounds a line of the history file that OpenHistory reads;
// a longer line (from an older version, or corrupt) is skipped without being
// held in memory. JSON escaping makes a source at most 6 times longer.
const maxHistoryLine = 6*maxHistorySource + 4096

// JupyterDataDir returns the user's Jupyter data directory: $JUPYTER_DATA_DIR,
// else the platform default used by jupyter_core (~/.local/share/jupyter
// honouring $XDG_DATA_HOME on Linux, ~/Library/Jupyter on macOS,
// %APPDATA%\jupyter on Windows).
func JupyterDataDir() (string, error) {
	if d := os.Getenv("JUPYTER_DATA_DIR"); d != "" {
		return d, nil
	}
	home, err := os.UserHomeDir()
	switch runtime.GOOS {
	case "darwin":
		if err != nil {
			return "", fmt.Errorf("jupyter data dir: %w", err)
		}
		return filepath.Join(home, "Library", "Jupyter"), nil
	case "windows":
		if a := os.Getenv("APPDATA"); a != "" {
			return filepath.Join(a, "jupyter"), nil
		}
	}
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "jupyter"), nil
	}
	if err != nil {
		return "", fmt.Errorf("jupyter data dir: %w", err)
	}
	return filepath.Join(home, ".local", "share", "jupyter"), nil
}

// OpenHistory loads the history file at path (created if missing) and starts a
// new session numbered one past the highest session in it. An empty path gives
// an in-memory history starting at session 1. Unreadable lines (corrupt, or
// longer than maxHistoryLine) are skipped and counted, see Skipped.
func OpenHistory(path string) (*History, error) {
	h := &History{path: path, session: 1}
	if path == "" {
		return h, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	defer f.Close()
	// Lock so that kernels starting together get distinct session numbers.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return nil, fmt.Errorf("history %s: lock: %w", path, err)
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	last, complete, err := h.load(f)
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", path, err)
	}
	if !complete { // a write cut short: end its line so the next record starts afresh
		if _, err := f.Write([]byte{'\n'}); err != nil {
			return nil, fmt.Errorf("history %s: %w", path, err)
		}
	}
	h.session = last + 1
	if err := h.write(f, HistoryEntry{Session: h.session, Start: time.Now().UTC().Format(time.RFC3339)}); err != nil {
		return nil, err
	}
	return h, nil
}

// load reads the entries of r and returns the highest session number seen,
// and whether r ends with a complete line.
func (h *History) load(r io.Reader) (last int, complete bool, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	oversized, complete := false, true
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			complete = chunk[len(chunk)-1] == '\n'
		}
		if len(line)+len(chunk) > maxHistoryLine {
			oversized, line = true, line[:0]
		} else if !oversized {
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return last, complete, err
		}
		if oversized || len(bytes.TrimSpace(line)) > 0 {
			var e HistoryEntry
			switch {
			case oversized, json.Unmarshal(line, &e) != nil, e.Session <= 0:
				h.skipped++
			default:
				last = max(last, e.Session)
				if e.Line > 0 {
					h.entries = append(h.entries, e)
				}
			}
		}
		if err != nil { // io.EOF
			return last, complete, nil
		}
		line, oversized = line[:0], false
	}
}

func (h *History) write(f *os.File, e HistoryEntry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("history %s: %w", h.path, err)
	}
	return nil
}

// Session returns the number of the current session.
func (h *History) Session() int { return h.session }

// Skipped returns how many unreadable lines OpenHistory skipped.
func (h *History) Skipped() int { return h.skipped }

// Append stores the source of the cell executed with execution count line;
// of a source longer than maxHistorySource, its beginning and a note.
func (h *History) Append(line int, source string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := HistoryEntry{Session: h.session, Line: line, Source: truncateSource(source)}
	h.entries = append(h.entries, e)
	if h.path == "" {
		return nil
	}
	f, err := os.OpenFile(h.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	defer f.Close()
	return h.write(f, e)
}

// Tail returns the last n entries of all sessions (all of them if n <= 0).
func (h *History) Tail(n int) []HistoryEntry {
	h.mu.Lock()
	defer h.mu.Unlock()
	return lastN(h.entries, n)
}

// Range returns the entries of a session with start <= line < stop (no upper
// bound if stop <= 0). Session 0 is the current session, negative sessions
// count back from it (-1 is the previous one), positive ones are absolute.
func (h *History) Range(session, start, stop int) []HistoryEntry {
	if session <= 0 {
		session += h.session
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []HistoryEntry
	for _, e := range h.entries {
		if e.Session == session && e.Line >= start && (stop <= 0 || e.Line < stop) {
			out = append(out, e)
		}
	}
	return out
}

// Search returns the last n entries (all if n <= 0) whose source matches the
// glob pattern ('*' any text, '?' any one character; empty means '*'). With
// unique, only the most recent entry of each distinct source is kept.
func (h *History) Search(pattern string, n int, unique bool) []HistoryEntry {
	if pattern == "" {
		pattern = "*"
	}
	p := []rune(pattern)
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []HistoryEntry
	seen := map[string]bool{}
	for i := len(h.entries) - 1; i >= 0 && (n <= 0 || len(out) < n); i-- {
		e := h.entries[i]
		if unique && seen[e.Source] || !globMatch(p, []rune(e.Source)) {
			continue
		}
		seen[e.Source] = true
		out = append(out, e)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// truncateSource returns source, or if it is longer than maxHistorySource
// its first maxHistorySource bytes (cut at a character boundary) followed by
// a note (in no particular language: the kernel does not know it) saying
// what was left out.
func truncateSource(source string) string {
	if len(source) <= maxHistorySource {
		return source
	}
	n := maxHistorySource
	for n > 0 && !utf8.RuneStart(source[n]) {
		n--
	}
	return fmt.Sprintf("%s\n[history: this cell had %d bytes; only the first %d are stored]", source[:n], len(source), n)
}

func lastN(es []HistoryEntry, n int) []HistoryEntry {
	if n > 0 && len(es) > n {
		es = es[len(es)-n:]
	}
	return append([]HistoryEntry(nil), es...)
}

// globMatch reports whether s matches pattern p, where '*' matches any run of
// characters (newlines included) and '?' any single character. It runs in
// O(len(p)·len(s)) by backtracking only to the last star.
func globMatch(p, s []rune) bool {
	pi, si, star, mark := 0, 0, -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == s[si]):
			pi++
			si++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
