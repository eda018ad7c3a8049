package remote

// The one place a 401 or 403 is handled. With OAuth the bridge hands the
// challenge to the session, which refreshes, signs in or steps up, and the
// request is sent again; with the user's own credential (--header
// Authorization) the request gets the challenge and what to do. A 401 or
// 403 proves the server never ran the request (the bearer check comes
// before any handler), and it is no outage: the server answered. A request
// waiting for a sign-in has no request timeout and counts no failure.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/oauth"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/redact"
	"github.com/mcpshim-dev/mcpshim/termsafe"
)

// maxAuthTries bounds the sign-ins one request may cause: "Retry the
// original request with the new authorization no more than a few times"
// (2025-11-25, Step-Up Authorization Flow).
const maxAuthTries = 3

// authWait is how long a request waits for a sign-in before it is answered
// with an error saying what to run: below Claude Code's default MCP_TIMEOUT
// of 30 s, so the client shows mcpshim's sentence and not its own timeout.
// The sign-in goes on in the background until --oauth-timeout.
const authWait = 25 * time.Second

// authorizationHeader is the bearer token for the next request, unless the
// user set Authorization with --header.
func (b *bridge) authorizationHeader(ctx context.Context) string {
	if b.cfg.Auth == nil {
		return ""
	}
	return b.cfg.Auth.Header(ctx)
}

// challenged handles a 401 or 403 with the OAuth session: nil means the
// request may be sent again.
func (b *bridge) challenged(ctx context.Context, resp *http.Response, tries int) error {
	if tries >= maxAuthTries {
		return fmt.Errorf("the server refused the request %d times after signing in (HTTP %d)", tries, resp.StatusCode)
	}
	wait, cancel := context.WithTimeout(ctx, authWait)
	defer cancel()
	err := b.cfg.Auth.Challenged(wait, resp.StatusCode, resp.Header, resp.Request.Header.Get("Authorization"))
	if err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return fmt.Errorf("signing in is waiting for the browser (the URL is on mcpshim's stderr): finish it there, or run mcpshim auth login --url %s, then reconnect", redact.URL(b.cfg.URL))
	}
	return err
}

// deniedError is a 401 or 403 that signing in did not get past.
type deniedError struct {
	status    int
	challenge string // the WWW-Authenticate, scrubbed
	body      string // the start of the response's body, for the error's data
	err       error
}

func (e *deniedError) Error() string { return e.err.Error() }
func (e *deniedError) Unwrap() error { return e.err }

// denied handles a 401 or 403 to one exchange, whose body the caller has
// read: nil means the request may be sent again. tries is how many
// sign-ins the request already caused.
func (b *bridge) denied(ctx context.Context, resp *http.Response, tries int) *deniedError {
	ch := b.scrub(resp.Header.Get("Www-Authenticate"))
	de := &deniedError{status: resp.StatusCode, challenge: ch}
	if b.cfg.Auth != nil {
		if de.err = b.challenged(ctx, resp, tries); de.err == nil {
			return nil
		}
		return de // the session recorded auth_failed, with its stage
	}
	fields := []ledger.Field{ledger.F(phases.FieldStatus, resp.StatusCode), ledger.F(phases.FieldWWWAuthenticate, ch)}
	if cs := oauth.ParseChallenges(ch); len(cs) > 0 {
		fields = append(fields, ledger.F(phases.FieldScheme, cs[0].Scheme))
		for _, k := range []string{"realm", "resource_metadata", "error", "scope"} {
			if v := cs[0].Param(k); v != "" {
				fields = append(fields, ledger.F(k, v))
			}
		}
	}
	b.emit(phases.Handshake, phases.AuthFailed, fields...)
	b.say("HTTP %d: %s", resp.StatusCode, ch)
	de.err = errors.New("set the credential with --header 'Authorization: Bearer ${TOKEN}' and TOKEN in the entry's env")
	for _, h := range b.cfg.Headers {
		if strings.EqualFold(h.Name, "Authorization") {
			de.err = errors.New("the credential given with --header Authorization was refused: renew it, or drop that header and let mcpshim sign in (OAuth)")
		}
	}
	return de
}

// finishSignIn keeps the process while a sign-in is under way after the
// client left (it gave up waiting for the handshake): the person may still
// finish in the browser, and the token is kept for the next connection. A
// signal or the sign-in's own deadline ends the wait.
func (b *bridge) finishSignIn(ctx context.Context) {
	if b.cfg.Auth == nil {
		return
	}
	done := b.cfg.Auth.Running()
	if done == nil {
		return
	}
	b.say("the client left while signing in: waiting for the browser (until --oauth-timeout) so that the next connection has the token")
	select {
	case <-done:
	case <-b.cfg.Signals:
	case <-ctx.Done():
	}
}

// authFailed answers the requests of msg after a 401 or 403 that signing
// in did not get past; it is no outage, so nothing else fails.
func (b *bridge) authFailed(msg message, de *deniedError) {
	data := map[string]any{"url": b.endpoint(), "http_status": de.status}
	if de.challenge != "" {
		data["www_authenticate"] = de.challenge
	}
	if de.body != "" {
		data["body"] = b.scrub(de.body)
	}
	text := fmt.Sprintf("mcpshim: server %s: HTTP %d and signing in failed: %s", b.cfg.Name, de.status, b.scrub(de.err.Error()))
	var fe *oauth.FlowError
	if errors.As(de.err, &fe) && (fe.Stage == oauth.StageAuthorization || fe.Stage == oauth.StageToken || fe.Stage == oauth.StageRefresh) &&
		!strings.Contains(text, "mcpshim auth login") {
		text += fmt.Sprintf("; to sign in by hand: mcpshim auth login --url %s", redact.URL(b.cfg.URL))
	}
	if b.cfg.Auth == nil {
		text = fmt.Sprintf("mcpshim: server %s: the server refused the credentials (%s)", b.cfg.Name, describeStatus(de.status, nil))
		if de.challenge != "" {
			text += "; WWW-Authenticate: " + de.challenge
		}
		text += "; " + de.err.Error()
	}
	msg.each(func(m message) {
		if m.isRequest() {
			b.fail(m.id, text, data)
		}
	})
}

// authStep records one step of a sign-in: its ledger event with every value
// redacted, and a line on stderr for the steps a person acts on.
func (b *bridge) authStep(st oauth.Step) {
	var fields []ledger.Field
	add := func(k, v string) {
		if v != "" {
			fields = append(fields, ledger.F(k, b.scrub(v)))
		}
	}
	if st.Status != 0 {
		fields = append(fields, ledger.F(phases.FieldStatus, st.Status))
	}
	for _, f := range st.Facts() {
		add(f[0], f[1])
	}
	if st.Event == oauth.StepFailed {
		add(phases.FieldMessage, st.Message)
	}
	if st.ExpiresIn > 0 {
		fields = append(fields, ledger.F("expires_in_s", int64(st.ExpiresIn/time.Second)))
	}
	switch st.Event {
	case oauth.StepAuthorized:
		fields = append(fields, ledger.F("refresh_token", st.Refresh))
	case oauth.StepRefreshed:
		fields = append(fields, ledger.F("rotated", st.Rotated))
	}
	b.emit(phases.Handshake, st.Event, fields...)
	switch st.Event {
	case oauth.StepStarted:
		if st.Grant != oauth.GrantAuthorizationCode {
			b.say("signing in to %s as client %s", st.Issuer, st.ClientID)
		} else {
			b.say("signing in at %s: a browser opens; if none does, open the URL below", st.Issuer)
		}
	case oauth.StepAuthorized:
		b.say("signed in at %s (scope %q)", st.Issuer, st.Scope)
	case oauth.StepFailed:
		b.say("signing in failed: %s", strings.TrimSpace(st.Message))
	}
}

// sayWriter prints the session's prompt (the authorization URL) through the
// recorder, in order with the event lines. The URL is printed whole, made
// safe for the terminal but not redacted: a person must be able to open it,
// and it holds no secret (the PKCE challenge, not the verifier). It never
// reaches the ledger.
type sayWriter struct{ b *bridge }

func (w sayWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimSuffix(string(p), "\n"), "\n") {
		w.b.rec.Say(termsafe.String(line) + "\n")
	}
	return len(p), nil
}
