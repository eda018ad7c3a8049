package remote

// Signing in: on a 401 or 403 the bridge hands the challenge to the OAuth
// session, which refreshes, signs in or steps up, and the request is sent
// again. A 401 or 403 proves the server never ran the request: the bearer
// check comes before any handler.

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
		return fmt.Errorf("signing in is waiting for the browser (the URL is on mcpshim's stderr): finish it there, or run mcpshim auth login --url %s, then reconnect", b.cfg.URL)
	}
	return err
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

// authFailed answers the requests of msg after a sign-in that did not
// succeed; it is no outage, so nothing else fails.
func (b *bridge) authFailed(msg message, status int, err error) {
	text := fmt.Sprintf("mcpshim: server %s: HTTP %d and signing in failed: %s", b.cfg.Name, status, b.scrub(err.Error()))
	var fe *oauth.FlowError
	if errors.As(err, &fe) && (fe.Stage == oauth.StageAuthorization || fe.Stage == oauth.StageToken || fe.Stage == oauth.StageRefresh) &&
		!strings.Contains(text, "mcpshim auth login") {
		text += fmt.Sprintf("; to sign in by hand: mcpshim auth login --url %s", b.cfg.URL)
	}
	data := map[string]any{"url": b.endpoint(), "http_status": status}
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
		fields = append(fields, ledger.F("status", st.Status))
	}
	add("stage", st.Stage)
	add("issuer", st.Issuer)
	add("resource", st.Resource)
	add("scope", st.Scope)
	add("grant", st.Grant)
	add("client", st.ClientKind)
	add("client_id", st.ClientID)
	add("error", st.Error)
	add("error_description", st.Description)
	if st.Event == oauth.StepFailed {
		add("message", st.Message)
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
