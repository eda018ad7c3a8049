package remote

// Every string that leaves the bridge (the ledger, stderr, the errors the
// client gets) passes one redaction: the credentials the user gave it (the
// --header values, the URL's userinfo and query values) by value, the URL in
// the forms Go's errors quote it, then redact's rules for anything
// secret-shaped a server wrote.

import (
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/mcpshim-dev/mcpshim/redact"
)

// scrubber hides the secrets of one bridge; the bridge's goroutines share it.
type scrubber struct {
	urls   []string // the URL as Go's errors quote it, replaced by safe
	safe   string
	mu     sync.RWMutex
	values []string // literal secrets, longest first
	// more, when set, are secrets that change as the bridge runs (OAuth's
	// tokens and the credentials its sign-ins sent), longest first.
	more func() []string
}

func newScrubber(u *url.URL, headers []Header) *scrubber {
	s := &scrubber{safe: redact.URL(u)}
	if u != nil {
		s.urls = []string{u.String(), u.Redacted()}
		if pw, ok := u.User.Password(); ok {
			s.values = appendSecret(s.values, pw, 1)
		}
		for _, vs := range u.Query() {
			for _, v := range vs {
				s.values = appendSecret(s.values, v, 4)
			}
		}
	}
	for _, h := range headers {
		s.values = appendSecret(s.values, h.Value, 4)
		// The credential alone, as a server may quote it without its scheme.
		for _, w := range strings.Fields(h.Value) {
			s.values = appendSecret(s.values, w, 8)
		}
	}
	sort.Slice(s.values, func(i, j int) bool { return len(s.values[i]) > len(s.values[j]) })
	return s
}

func appendSecret(values []string, v string, min int) []string {
	if len(v) < min {
		return values
	}
	values = append(values, v)
	// Go's errors and servers' echoes may quote it escaped.
	if e := url.QueryEscape(v); e != v {
		values = append(values, e)
	}
	return values
}

// addQuery hides the query values of u too: the endpoint a 2024-11-05
// server names carries the session id as ?sessionId=.
func (s *scrubber) addQuery(u *url.URL) {
	s.mu.Lock()
	defer s.mu.Unlock()
	values := slices.Clone(s.values) // known hands out the old one without the lock
	for _, vs := range u.Query() {
		for _, v := range vs {
			values = appendSecret(values, v, 4)
		}
	}
	sort.Slice(values, func(i, j int) bool { return len(values[i]) > len(values[j]) })
	s.values = values
}

// known are the literal secrets, longest first, for redact.HideAlso: the
// tracker's records hide them too.
func (s *scrubber) known() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.values
}

// String returns text with the bridge's secrets and anything secret-shaped
// replaced by redact.Marker.
func (s *scrubber) String(text string) string {
	for _, u := range s.urls {
		text = strings.ReplaceAll(text, u, s.safe)
	}
	s.mu.RLock()
	for _, v := range s.values {
		text = strings.ReplaceAll(text, v, redact.Marker)
	}
	s.mu.RUnlock()
	if s.more != nil {
		for _, v := range s.more() {
			if len(v) >= 6 {
				text = strings.ReplaceAll(text, v, redact.Marker)
			}
		}
	}
	return redact.String(text)
}
