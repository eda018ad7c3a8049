package probe

import (
	"unicode/utf8"
)

// redact hides the secrets in everything a server said that a Result keeps
// (its report, the probe cache and the probe's ledger all come from it),
// before the verdict is judged from it. Tool names stay: a lock compares
// them with what the shim sees live.
func (r *Result) redact(hide func(string) string) {
	r.Realm = hide(r.Realm)
	for i := range r.Warnings {
		r.Warnings[i] = hide(r.Warnings[i])
	}
	for i := range r.StderrTail {
		r.StderrTail[i] = hide(r.StderrTail[i])
	}
	for i := range r.Canaries {
		r.Canaries[i].Detail = hide(r.Canaries[i].Detail)
	}
	for i := range r.Timeline {
		r.Timeline[i].Detail = hide(r.Timeline[i].Detail)
	}
	if r.ServerInfo != nil {
		r.ServerInfo.Name, r.ServerInfo.Version = hide(r.ServerInfo.Name), hide(r.ServerInfo.Version)
	}
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
