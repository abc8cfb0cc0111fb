package kernel

import "context"

// Executor runs code on behalf of the kernel. Calls are serialised by the kernel
// (one execution queue), except that ctx of a running Execute is cancelled on interrupt.
type Executor interface {
	// Execute runs one cell. Output produced while running goes to out, live.
	// It returns when the cell finishes or soon after ctx is cancelled (interrupt).
	Execute(ctx context.Context, code string, opts ExecOptions, out Output) ExecResult
	// Complete returns completions at cursor (a position in Unicode code points, as on the wire).
	Complete(code string, cursor int) Completion
	// Inspect returns a MIME bundle describing the object at cursor (code points), found=false if none.
	Inspect(code string, cursor, detailLevel int) (data map[string]any, found bool)
	// IsComplete reports "complete", "incomplete" (with the indent to use), "invalid" or "unknown".
	IsComplete(code string) (status, indent string)
}

// ExecOptions carries the fields of execute_request the executor needs.
type ExecOptions struct {
	Silent, StoreHistory, AllowStdin bool
	ExecutionCount                   int               // the count this cell will be reported with
	UserExpressions                  map[string]string // name -> expression, evaluated after the cell
}

// ExecResult is the outcome of one cell.
type ExecResult struct {
	Data, Metadata  map[string]any // the execute_result MIME bundle; nil Data if the cell has no value
	Err             *ExecError     // nil on success
	UserExpressions map[string]any // name -> {"status":"ok","data":{...},"metadata":{}} or error dict
}

// ExecError is an error output (ename, evalue, traceback) of a failed cell.
type ExecError struct {
	Name, Value string
	Traceback   []string
}

// Output is where a running cell sends what it produces; the kernel implements it per request
// (publishing on iopub with the request as parent), `harmonium run` implements it for notebooks.
type Output interface {
	Stream(name, text string)                                      // name is "stdout" or "stderr"
	Display(data, metadata, transient map[string]any, update bool) // display_data, or update_display_data if update
	ClearOutput(wait bool)
	Input(prompt string, password bool) (string, error) // input_request on stdin; error if stdin not allowed
}

// Completion is a complete_reply's payload.
type Completion struct {
	Matches    []string
	Start, End int            // code points
	Metadata   map[string]any // e.g. "_jupyter_types_experimental"
}
