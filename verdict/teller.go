package verdict

import (
	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/termsafe"
)

// Ends reports whether event ends its run: nothing after it changes the
// run's outcome, cause or reason.
func Ends(event string) bool {
	switch event {
	case phases.Exited, phases.Disconnected, phases.SpawnFailed, phases.ConnectFailed:
		return true
	}
	return false
}

// starts reports whether event opens a run.
func starts(event string) bool {
	switch event {
	case phases.SpawnRequested, phases.Spawned, phases.Connected, phases.ConnectFailed:
		return true
	}
	return false
}

// Teller folds a session's records as they are written and says the
// verdict of each run when it ends: the shim's own last line about it in
// the client's log. It keeps one run's fold at a time and is not safe for
// concurrent use (it runs on the recorder's goroutine).
type Teller struct {
	Name string // the server's label
	run  string
	fold Fold
	told bool
}

// Record folds r in and returns the line to print when r ends its run ("" otherwise).
func (t *Teller) Record(r *ledger.Record) string {
	if r.Run == "" {
		return ""
	}
	if r.Run != t.run {
		if !starts(r.Event) {
			return "" // a late record of a run no longer followed
		}
		t.run, t.fold, t.told = r.Run, Fold{}, false
	}
	e := ledger.EntryOf(r)
	t.fold.Add(&e)
	if t.told || !Ends(r.Event) {
		return ""
	}
	t.told = true
	return t.Line(Judge(&t.fold, r.Time, false))
}

// Line is v as the shim says it: "mcpshim NAME: OUTCOME: reason — advice".
func (t *Teller) Line(v Verdict) string {
	s := "mcpshim " + t.Name + ": " + v.Outcome
	if v.Reason != "" {
		s += ": " + v.Reason
	}
	if v.Advice != "" {
		s += " — " + v.Advice
	}
	return termsafe.String(s) + "\n"
}
