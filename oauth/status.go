package oauth

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcpshim-dev/mcpshim/redact"
)

// State says in a few words what a kept sign-in can do now.
func State(r *Record, now time.Time) string {
	t := r.Token
	switch {
	case t == nil:
		return "none: sign in with mcpshim auth login"
	case t.Expiry.IsZero():
		return "valid"
	case !t.expired(now):
		return "valid for " + t.Expiry.Sub(now).Round(time.Minute).String()
	case t.RefreshToken != "" || machine(r.Grant):
		return "expired, renewed on next use"
	}
	return "expired: sign in with mcpshim auth login"
}

// File is where a record is kept.
func (s *Store) File(r *Record) string { return s.name(r.Server, r.ClientKey) + ".json" }

// Logout forgets the sign-ins kept for server (its URL, a trailing slash
// aside), revoking their tokens where the authorization server allows, and
// tells done of each (what revoking did) once it is forgotten. secret is as
// Revoke's. It returns how many it forgot.
func (s *Store) Logout(ctx context.Context, server, secret string, done func(r *Record, how string)) (int, error) {
	recs, err := s.List()
	if err != nil {
		return 0, err
	}
	key := server
	if u, err := url.Parse(server); err == nil {
		key = StoreKey(u) // a URL given with its query or userinfo names the same sign-in
	}
	n := 0
	for _, r := range recs {
		if strings.TrimSuffix(r.Server, "/") != strings.TrimSuffix(server, "/") && strings.TrimSuffix(shownURL(r.Server), "/") != strings.TrimSuffix(server, "/") &&
			strings.TrimSuffix(r.Server, "/") != strings.TrimSuffix(key, "/") {
			continue // neither the URL nor as auth status shows it
		}
		n++
		// Under the record's lock, so that a running shim's refresh does
		// not write the tokens back after they are gone: it finds the
		// store empty and stops using them.
		unlock, err := s.Lock(ctx, r.Server, r.ClientKey)
		if err != nil {
			return n - 1, err
		}
		if cur, err := s.Load(r.Server, r.ClientKey); err == nil && cur.Token != nil {
			r = cur // what a refresh saved meanwhile is what to revoke
		}
		how := Revoke(ctx, r, secret)
		err = s.Remove(r)
		unlock()
		if err != nil {
			return n, err
		}
		done(r, how)
	}
	return n, nil
}

// Revoke asks the authorization server to revoke a record's tokens (RFC
// 7009), the refresh token first, and says what happened. secret is a
// pre-registered client's secret, which the store does not keep.
func Revoke(ctx context.Context, r *Record, secret string) string {
	if r.Token == nil {
		return "no token was kept"
	}
	if r.AS == nil || r.AS.RevocationEndpoint == "" {
		return "the authorization server offers no revocation; the token is forgotten here and lapses at its expiry"
	}
	c := r.Clients[r.Issuer]
	if c == nil {
		return "no client identity kept to revoke with; the token is forgotten here"
	}
	cc := *c
	if cc.Kind == KindPreRegistered {
		cc.Secret = secret
	}
	s := &Session{hc: &http.Client{Timeout: 30 * time.Second, CheckRedirect: redirectRule(false)},
		post: &http.Client{Timeout: 30 * time.Second, CheckRedirect: redirectRule(true)}}
	var failed []string
	for _, tok := range []struct{ value, hint string }{{r.Token.RefreshToken, "refresh_token"}, {r.Token.AccessToken, "access_token"}} {
		if tok.value == "" {
			continue
		}
		form := url.Values{"token": {tok.value}, "token_type_hint": {tok.hint}}
		if err := s.revoke(ctx, r.AS.RevocationEndpoint, &cc, r.AS, form); err != nil {
			failed = append(failed, err.Error())
		}
	}
	if len(failed) > 0 {
		return "revocation failed (" + strings.Join(failed, "; ") + "); the token is forgotten here"
	}
	return "revoked at " + r.Issuer
}

// revoke posts one revocation request with the client's authentication.
func (s *Session) revoke(ctx context.Context, endpoint string, c *Client, m *ServerMetadata, form url.Values) error {
	req, err := s.formRequest(ctx, endpoint, c, m, form)
	if err != nil {
		return err
	}
	resp, err := s.postClient().Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", endpoint, unwrapURLError(err))
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered HTTP %d%s", endpoint, resp.StatusCode, redirectError(resp))
	}
	return nil
}

// Status is one kept sign-in as mcpshim auth status shows it: never a token.
type Status struct {
	Server    string    `json:"server"`
	Client    string    `json:"client"`
	ClientID  string    `json:"client_id,omitempty"`
	Issuer    string    `json:"issuer,omitempty"`
	Grant     string    `json:"grant,omitempty"`
	Scope     string    `json:"scope,omitempty"`
	State     string    `json:"state"`
	Expiry    time.Time `json:"expiry,omitzero"`
	Refresh   bool      `json:"refresh_token"`
	Updated   time.Time `json:"updated"`
	TokenFile string    `json:"file"`
}

// Statuses are the kept sign-ins recs of store as of now.
func Statuses(store *Store, recs []*Record, now time.Time) []Status {
	out := []Status{}
	for _, r := range recs {
		e := Status{Server: shownURL(r.Server), Client: r.ClientKey, Issuer: r.Issuer, Grant: r.Grant, Updated: r.Updated, State: State(r, now), TokenFile: store.File(r)}
		if cl := r.Clients[r.Issuer]; cl != nil {
			e.ClientID = cl.ID
		}
		if r.Token != nil {
			e.Scope, e.Expiry, e.Refresh = r.Token.Scope, r.Token.Expiry, r.Token.RefreshToken != ""
		}
		out = append(out, e)
	}
	return out
}

// shownURL is a kept server URL as auth status shows it: no userinfo, query
// values hidden (a --url may carry an ?api_key=).
func shownURL(raw string) string { return redact.RawURL(raw) }

// Facts are the step's text facts that are set, in the order they are
// shown and recorded.
func (st Step) Facts() [][2]string {
	var out [][2]string
	for _, kv := range [][2]string{{"stage", st.Stage}, {"issuer", st.Issuer}, {"resource", st.Resource}, {"scope", st.Scope},
		{"grant", st.Grant}, {"client", st.ClientKind}, {"client_id", st.ClientID}, {"error", st.Error}, {"error_description", st.Description}} {
		if kv[1] != "" {
			out = append(out, kv)
		}
	}
	return out
}

// Line is the step on one line: the event and its facts, but the grant (the
// person signing in chose it).
func (st Step) Line() string {
	var b strings.Builder
	b.WriteString(st.Event)
	kv := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, " %s=%s", k, quoteIfSpace(v))
		}
	}
	if st.Status != 0 {
		kv("status", fmt.Sprint(st.Status))
	}
	for _, f := range st.Facts() {
		if f[0] != "grant" {
			kv(f[0], f[1])
		}
	}
	if st.ExpiresIn > 0 {
		kv("expires_in", st.ExpiresIn.String())
	}
	if st.Event == StepFailed {
		kv("message", st.Message)
	}
	return b.String()
}

func quoteIfSpace(v string) string {
	if strings.ContainsAny(v, " \t\"") {
		return fmt.Sprintf("%q", v)
	}
	return v
}
