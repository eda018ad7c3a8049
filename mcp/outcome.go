package mcp

// Outcomes of a request, as the ledger names them.
const (
	OutcomeSuccess       = "success"
	OutcomeIsError       = "is_error"
	OutcomeRPCError      = "rpc_error"
	OutcomeInputRequired = "input_required"
	OutcomeTaskCreated   = "task_created"
)

// Outcome names how a response ended its request. 2025-11-25 server/tools:
// "Tools use two error reporting mechanisms: Protocol Errors: Standard
// JSON-RPC errors ... Tool Execution Errors: Reported in tool results with
// isError: true". 2026-07-28: a result whose resultType is
// "input_required" is not an end ("the request is incomplete and more
// information is needed"), and the answer to a task-augmented request is a
// CreateTaskResult ({"task": …}): the work goes on, its outcome comes with
// tasks/result. The members are read by the scanner, wherever they sit in
// a result of any size.
func Outcome(m *Msg) string {
	switch {
	case m.Kind == ErrorResponse:
		return OutcomeRPCError
	case m.IsError:
		return OutcomeIsError
	case m.ResultType == "input_required":
		return OutcomeInputRequired
	case m.Task:
		return OutcomeTaskCreated
	}
	return OutcomeSuccess
}

// Call is what the tap reads of a tools/call's params, in one pass.
type Call struct {
	Name      string
	Arguments []byte // raw; nil when absent
	Task      bool   // task-augmented: params.task is present
	// Continuation: the params continue an earlier round of the same call
	// (MRTR, 2026-07-28 basic/patterns/mrtr): the client retries the request
	// with the input the server asked for (inputResponses, requestState).
	Continuation bool
	Meta         []byte // params._meta, raw
}

var callMembers = []string{"name", "arguments", "task", "inputResponses", "requestState", "_meta"}

// ParseCall reads a tools/call's params.
func ParseCall(params []byte) Call {
	var v [6][]byte
	membersOf(params, callMembers, v[:])
	return Call{Name: String(v[0]), Arguments: v[1], Task: v[2] != nil, Continuation: v[3] != nil || v[4] != nil, Meta: v[5]}
}
