// Package verdict owns the judgement of a run: what happened to one server
// process (or one connection to a remote server) in words a person chasing
// a failure can act on. It folds a run's ledger records in any order into a
// Fold, and Judge turns the Fold into a Verdict: the outcome, whether it
// failed, the last confirmed event, the cause (the stderr line the cause
// package chooses, a spawn error, a refusal, an HTTP status), the reason in
// one line, the advice, and the four answers of why (did it launch,
// initialize, list tools, reach out?) with their evidence.
//
// Every view renders a Verdict and derives nothing of its own: the ledger's
// table, show, why, stats and HTML report, probe and lock, the OTLP export,
// and the shim's own last line when a run ends (Teller). It reads records
// through ledger and names events through phases; it imports nothing above
// them.
//
// Adding an event: what the event says about its run goes in Fold.Add (a
// fact, and a Mark when its order against other records matters); what the
// facts mean goes in Judge (judge.go for a process, remote.go for a
// connection), its words in words.go, and its place in the four answers in
// answers.go. A table test in judge_test.go scripts it as ledger records.
// Records after a run's end record may change only the advice: a reader
// that stops at the end says the same thing.
package verdict
