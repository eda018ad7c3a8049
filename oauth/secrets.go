package oauth

import (
	"net/url"
	"slices"
	"sync/atomic"
)

// maxSecrets bounds the values a Session remembers to hide: the newest
// are kept (a long-lived shim refreshes every hour for days).
const maxSecrets = 128

// secretFields are the form fields of a token request that carry a
// credential: never to be shown, whatever the server echoes back.
var secretFields = []string{"code", "code_verifier", "refresh_token", "assertion", "subject_token", "client_secret", "client_assertion"}

// secrets are the values to hide, newest last, and the list Secrets
// returns (longest first, so that no part of a longer one is left), replaced
// whole on each change so that reading it takes no lock.
type secrets struct {
	order []string
	list  atomic.Pointer[[]string]
}

// Secrets are the values no log may show, each also URL-encoded: the
// client's secret, every token the Session has held, and the credentials its
// sign-ins sent (a code, a verifier, an assertion). The bridge hides them by
// value in every string it writes, as a server may echo one in an error.
func (s *Session) Secrets() []string {
	if p := s.hidden.list.Load(); p != nil {
		return *p
	}
	return nil
}

// hide adds values to Secrets.
func (s *Session) hide(values ...string) {
	s.hideMu.Lock()
	defer s.hideMu.Unlock()
	h := &s.hidden
	for _, v := range values {
		// A server's echo, or Go's error, may quote it URL-encoded.
		for _, form := range []string{v, url.QueryEscape(v)} {
			if form != "" && !slices.Contains(h.order, form) {
				h.order = append(h.order, form)
			}
		}
	}
	if len(h.order) > maxSecrets {
		h.order = h.order[len(h.order)-maxSecrets:]
	}
	list := slices.Clone(h.order)
	slices.SortStableFunc(list, func(a, b string) int { return len(b) - len(a) })
	h.list.Store(&list)
}

// hideRecord hides the tokens and client secrets of r.
func (s *Session) hideRecord(r *Record) {
	if r == nil {
		return
	}
	var vs []string
	if r.Token != nil {
		vs = append(vs, r.Token.AccessToken, r.Token.RefreshToken)
	}
	for _, c := range r.Clients {
		vs = append(vs, c.Secret)
	}
	s.hide(vs...)
}
