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

// IsContinuation reports whether request params continue an earlier round
// of the same call (MRTR, 2026-07-28 basic/patterns/mrtr): the client
// retries the request with the input the server asked for.
func IsContinuation(params []byte) bool {
	return Member(params, "inputResponses") != nil || Member(params, "requestState") != nil
}
