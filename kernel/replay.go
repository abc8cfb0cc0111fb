package kernel

import "sync"

// replayWindow is how many recent signatures the kernel remembers, as
// ipykernel's Session.digest_history_size.
const replayWindow = 1 << 16

// replayGuard remembers the signatures of the last replayWindow messages so
// that a signed message captured and sent again (a replay) is refused: a
// genuine client never sends two messages with the same signature, since
// every header carries a fresh msg_id and date. It is safe for concurrent
// use; the zero value is not usable, see newReplayGuard.
type replayGuard struct {
	mu   sync.Mutex
	seen map[string]struct{}
	ring []string // the remembered signatures, oldest at next once full
	next int
}

func newReplayGuard(window int) *replayGuard {
	return &replayGuard{seen: make(map[string]struct{}, window), ring: make([]string, 0, window)}
}

// fresh records sig and reports whether it was not among the remembered
// signatures. When full, the oldest signature is forgotten.
func (g *replayGuard) fresh(sig []byte) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, dup := g.seen[string(sig)]; dup {
		return false
	}
	s := string(sig)
	g.seen[s] = struct{}{}
	if len(g.ring) < cap(g.ring) {
		g.ring = append(g.ring, s)
		return true
	}
	delete(g.seen, g.ring[g.next])
	g.ring[g.next] = s
	g.next = (g.next + 1) % len(g.ring)
	return true
}
