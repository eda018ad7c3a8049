package probe

import (
	"slices"
	"time"

	"github.com/mcpshim-dev/mcpshim/lock"
)

// ExitTempFail is EX_TEMPFAIL: a probe found only what time may fix.
const ExitTempFail = 75

// Report is a probe of the fleet as mcpshim probe reports it (its --json
// document).
type Report struct {
	Configs   []string        `json:"configs"`
	Problems  []ConfigProblem `json:"problems"`
	Notes     []string        `json:"notes,omitempty"`
	Results   []Result        `json:"results"`
	Lock      *LockCheck      `json:"lock,omitempty"`
	SinceLast *SinceLast      `json:"since_last,omitempty"`
	ElapsedMS float64         `json:"elapsed_ms"`
	Exit      int             `json:"exit"`
}

// LockCheck is the fleet's surface checked against a lock file.
type LockCheck struct {
	File   string       `json:"file"`
	Strict bool         `json:"strict"`
	State  string       `json:"state"` // LockHolds, LockFailed or LockUnverified
	Error  string       `json:"error,omitempty"`
	Drifts []lock.Drift `json:"drifts"`
}

// What a lock check found. A locked server that timed out or was
// unreachable was not checked: the lock neither holds nor failed for it,
// and only time may tell (the probe counts the timeout already).
const (
	LockHolds      = "holds"
	LockFailed     = "FAILED"
	LockUnverified = "unverified"
)

// CheckLock checks results against the lock in file; strict fails a changed
// tool definition too.
func CheckLock(file string, strict bool, results []Result) *LockCheck {
	c := &LockCheck{File: file, Strict: strict, Drifts: []lock.Drift{}}
	l, err := lock.Read(file)
	if err != nil {
		c.Error, c.State = err.Error(), LockFailed
		return c
	}
	if d := Verify(l, results); d != nil {
		c.Drifts = d
	}
	c.State = c.state()
	return c
}

func (c *LockCheck) state() string {
	if c.Failed() {
		return LockFailed
	}
	for _, d := range c.Drifts {
		if d.Unverified != "" {
			return LockUnverified
		}
	}
	return LockHolds
}

// Failed reports whether the lock failed for a reason a person must fix:
// a server unverified for a timeout is counted as a timeout already.
func (c *LockCheck) Failed() bool {
	failed := c.Error != ""
	for _, d := range c.Drifts {
		failed = failed || d.Failed(c.Strict) && !Outcome(d.Unverified).Retryable()
	}
	return failed
}

// SinceLast compares the READY servers with the previous probe's.
type SinceLast struct {
	Previous []string `json:"previous"`
	Lost     []string `json:"lost"` // READY before, not now
}

// Remember records which of the fleet's servers are READY in results, and
// returns how that compares with its previous probe (nil when there was none).
func (c *Cache) Remember(fleet string, results []Result, at time.Time) *SinceLast {
	var ready []string
	for _, r := range results {
		if r.Outcome == Ready {
			ready = append(ready, r.Server)
		}
	}
	var since *SinceLast
	if prev, ok := c.LastReady(fleet); ok {
		since = &SinceLast{Previous: prev, Lost: []string{}}
		for _, name := range prev {
			if !slices.Contains(ready, name) {
				since.Lost = append(since.Lost, name)
			}
		}
	}
	c.SetReady(fleet, ready, at)
	return since
}

// Status is the exit status of the report: lock.ExitConfig for anything a
// person must fix, ExitTempFail when only time might help, else 0.
func (r *Report) Status() int {
	fix := len(r.Problems) > 0 || (r.SinceLast != nil && len(r.SinceLast.Lost) > 0)
	temp := false
	for _, res := range r.Results {
		switch {
		case res.Outcome.Retryable():
			temp = true
		case res.Outcome != Ready || res.CanaryFailed():
			fix = true
		}
	}
	if r.Lock != nil && r.Lock.Failed() {
		fix = true
	}
	switch {
	case fix:
		return lock.ExitConfig
	case temp:
		return ExitTempFail
	}
	return 0
}
