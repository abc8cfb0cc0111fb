package lang

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"math/bits"
	"os"
	"reflect"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// This file turns two faults the Go runtime makes fatal into errors of the
// cell, before they happen: runaway recursion (a goroutine's stack past its
// maximum is "fatal error: stack overflow", after tens of seconds of
// growing) and a huge make (past the memory the machine has, "fatal error:
// out of memory"). The rewrite puts a depth guard at the top of every
// function declared in a cell and routes make's sizes through a check.
// Faults that cannot be prevented this way (concurrent map writes, memory
// exhausted by many small allocations, recursion inside compiled code) are
// left to the process that runs the session: `harmonium kernel` restarts it.

// MaxCallDepth is how many calls of functions declared in cells may be in
// progress at once before a call that is itself that deep in its goroutine
// fails with a stack overflow error. An interpreted call takes about 600
// bytes of Go stack (1.5 kB through compiled callbacks), so the guard trips
// at 60–150 MB, far below the runtime's 1 GB.
const MaxCallDepth = 100_000

// checkedAllocBytes is the size from which a make is checked against the
// memory available; smaller ones cost only a multiplication.
const checkedAllocBytes = 64 << 20

// LimitError is the panic value of a guard, and the error of the cell it
// ends: Name is "StackOverflow" or "OutOfMemory".
type LimitError struct {
	Name, Msg string
}

// Error returns the message, e.g. "stack overflow: recursion deeper than …".
func (e *LimitError) Error() string { return e.Msg }

// funcSite is a function declared in a cell, as named in guard errors.
type funcSite struct {
	name string
	cell int
	line int
}

// guards keeps the depth count and the sites of a session's functions.
type guards struct {
	mu       sync.Mutex
	sites    []funcSite
	inFlight atomic.Int64      // calls of guarded functions in progress, all goroutines
	trip     func(*LimitError) // records a runaway recursion as the cell's error
	limit    int64             // the depth limit; 0 means MaxCallDepth (tests lower it)
}

// site registers a function declared in cell at line and returns its index
// for Enter.
func (g *guards) site(name string, cell, line int) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sites = append(g.sites, funcSite{name, cell, line})
	return len(g.sites) - 1
}

// Enter is called at the top of every guarded function (the rewrite inserts
// `defer __hm.Leave(__hm.Enter(site))`). When the call would make a runaway
// recursion, it records the error (trip) and ends the goroutine with
// runtime.Goexit, which runs the deferred calls of every frame. A panic
// would do too, but yaegi v0.16.1 recovers and re-panics in every
// interpreted frame, and unwinding n frames that way takes O(n²) time
// (8,000 frames: a minute). Interpreted code runs on goroutines of yaegi's
// or of the cell, never on the caller's of Session methods (see probe); a
// runaway callback on a goroutine of compiled code ends that goroutine too.
func (g *guards) Enter(site int) int {
	limit := g.limit
	if limit == 0 {
		limit = MaxCallDepth
	}
	if g.inFlight.Add(1) > limit && deepStack(int(limit)) {
		g.inFlight.Add(-1)
		g.mu.Lock()
		s := g.sites[site]
		g.mu.Unlock()
		g.trip(&LimitError{Name: "StackOverflow", Msg: fmt.Sprintf(
			"stack overflow: recursion deeper than %d calls in %s (declared in cell %d, line %d)", limit, s.name, s.cell, s.line)})
		runtime.Goexit()
	}
	return site
}

// Leave undoes Enter when the guarded function returns or unwinds.
func (g *guards) Leave(int) { g.inFlight.Add(-1) }

// deepStack reports whether the calling goroutine has at least n frames.
// An interpreted call takes at least two, so a recursion n deep has twice
// that; goroutines each in a few calls (100,000 workers blocked in the same
// function) are not deep and do not trip the guard. It walks at most n
// frames, so it is cheap for the shallow goroutines it exists for.
func deepStack(n int) bool {
	var pc [1]uintptr
	return runtime.Callers(n, pc[:]) > 0
}

// checkMake is the rewrite's wrapper of make's size arguments:
// make(T, n) becomes make(T, __hm.MakeSize((*T)(nil), n)). It returns n as an
// int, after checking that the allocation it asks for fits in the memory
// available; make itself reports negative sizes, as usual.
//
// n arrives as an interface, so the compiler no longer checks its type: a
// non-integer is refused here, with the compiler's words. (An integral float
// variable passes, as an untyped constant such as 1e6 must.)
func checkMake(typ any, n any) int {
	size, ok := toInt(n)
	if !ok {
		panic(fmt.Sprintf("make(%s, …): non-integer size argument %v of type %T", reflect.TypeOf(typ).Elem(), n, n))
	}
	if size <= 0 {
		return size // make itself reports a negative size
	}
	t := reflect.TypeOf(typ).Elem()
	var per uint64
	switch t.Kind() {
	case reflect.Slice, reflect.Chan:
		per = uint64(t.Elem().Size())
	case reflect.Map:
		// A map entry costs its key and value plus about a byte of control
		// data; the table is about 8/7 of the entries.
		per = (uint64(t.Key().Size()) + uint64(t.Elem().Size()) + 1) * 8 / 7
	}
	hi, bytes := bits.Mul64(uint64(size), per)
	if hi == 0 && bytes < checkedAllocBytes {
		return size
	}
	avail, from := availableMemory()
	if hi != 0 || bytes > avail {
		need := "more than 2^64 bytes"
		if hi == 0 {
			need = humanBytes(bytes)
		}
		panic(&LimitError{Name: "OutOfMemory", Msg: fmt.Sprintf(
			"out of memory: make(%s, %d) needs %s; %s available (%s)", t, size, need, humanBytes(avail), from)})
	}
	return size
}

// toInt converts make's size argument (any integer type, or an untyped
// constant that became int or float64) to int, saturating.
func toInt(n any) (int, bool) {
	v := reflect.ValueOf(n)
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return int(v.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if v.Uint() > math.MaxInt {
			return math.MaxInt, true
		}
		return int(v.Uint()), true
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if f != math.Trunc(f) || math.Abs(f) > math.MaxInt64 {
			return 0, false
		}
		return int(f), true
	}
	return 0, false
}

// availableMemory is what a new allocation may take: the system's
// available memory (Linux MemAvailable, or the cgroup's remaining limit if
// lower), and, when a Go memory limit is set (GOMEMLIMIT,
// debug.SetMemoryLimit), what is left under it. from says which bound it is.
func availableMemory() (uint64, string) {
	avail, from := uint64(math.MaxUint64), "no limit known"
	if v, ok := memInfo("MemAvailable"); ok {
		avail, from = v, "MemAvailable in /proc/meminfo"
	}
	if v, ok := cgroupRemaining(); ok && v < avail {
		avail, from = v, "the memory cgroup's limit"
	}
	if lim := debug.SetMemoryLimit(-1); lim > 0 && lim < math.MaxInt64 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		left := uint64(0)
		if uint64(lim) > ms.Sys-ms.HeapReleased {
			left = uint64(lim) - (ms.Sys - ms.HeapReleased)
		}
		if left < avail {
			avail, from = left, fmt.Sprintf("under the Go memory limit of %s", humanBytes(uint64(lim)))
		}
	}
	return avail, from
}

// memInfo reads a field of /proc/meminfo, in bytes.
func memInfo(field string) (uint64, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		return kb << 10, err == nil
	}
	return 0, false
}

// cgroupFile reads a number from a file of the process's memory cgroup
// (v2, as seen from inside a container); "max" (no limit) is not a number.
func cgroupFile(name string) (uint64, bool) {
	b, err := os.ReadFile("/sys/fs/cgroup/" + name)
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseUint(string(bytes.TrimSpace(b)), 10, 64)
	return v, err == nil
}

// cgroupMax is the memory cgroup's limit, if it has one.
func cgroupMax() (uint64, bool) { return cgroupFile("memory.max") }

// cgroupRemaining is the memory cgroup's limit minus its current use.
func cgroupRemaining() (uint64, bool) {
	max, ok := cgroupMax()
	if !ok {
		return 0, false
	}
	cur, _ := cgroupFile("memory.current")
	if cur > max {
		return 0, true
	}
	return max - cur, true
}

// humanBytes formats n as "1.5 GiB".
func humanBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, i := float64(n), 0
	for f >= unit && i < 6 {
		f /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", f, "KMGTPE"[i-1])
}

// MaxStack is the stack size limit SetProcessLimits gives goroutines: room
// for MaxCallDepth guarded calls even through compiled callbacks (~150 MB),
// while a recursion the guard cannot see (inside compiled code) fails in a
// few seconds instead of growing to the runtime's default 1 GB.
const MaxStack = 512 << 20

// SetProcessLimits prepares the Go runtime of a process that runs cells:
// goroutine stacks are limited to MaxStack, and unless GOMEMLIMIT is set,
// the garbage collector's soft memory limit is the machine's memory (or the
// memory cgroup's limit), so that garbage is collected harder before the
// process would be killed for lack of memory. It changes process-wide
// settings, so it is for the process's main function, not for libraries.
func SetProcessLimits() {
	debug.SetMaxStack(MaxStack)
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	total, ok := memInfo("MemTotal")
	if max, cok := cgroupMax(); cok && (!ok || max < total) {
		total, ok = max, true
	}
	if ok && total < math.MaxInt64 {
		debug.SetMemoryLimit(int64(total))
	}
}
