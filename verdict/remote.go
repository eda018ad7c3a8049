package verdict

import "strings"

// remote judges a run of a remote server (mcpshim --url, or a probe over
// HTTP): a connection, no process. Its records are connected or
// connect_failed, http_exchange per request, auth_failed for a 401 or 403,
// and disconnected (exit_code 69 when the bridge ended it failed).
func (j *judgement) remote() {
	f, v := j.f, &j.v
	auth := f.At.AuthFailed.Set() && (!j.ended || f.At.AuthFailed.Before(f.At.End)) &&
		!(f.At.Authorized.Set() && f.At.AuthFailed.Before(f.At.Authorized))
	switch {
	case f.SpawnFailed:
		j.set(Unreachable, f.Error, false)
		v.Reason = "cannot connect to " + orUnknown(f.URL) + ": " + f.Error
		v.Advice = j.unreachableAdvice()
	case !j.done && j.refusal != "":
		j.set(ProtocolError, j.refusal, true)
		v.Reason, v.Advice = j.refusalReason(), refusalAdvice
	case auth && f.AuthStage != "":
		c := "signing in stopped at " + authStages[f.AuthStage] + ": " + firstClause(f.AuthMessage)
		if f.AuthError != "" && !strings.Contains(c, f.AuthError) {
			c += " (" + f.AuthError + ")"
		}
		j.set(AuthRequired, c, true)
		v.Reason, v.Advice = c, j.signInAdvice()
	case auth:
		c := j.httpCause()
		if f.Challenge != "" {
			c += "; WWW-Authenticate: " + f.Challenge
		}
		j.set(AuthRequired, c, true)
		v.Reason = c
		v.Advice = "the server wants a credential: mcpshim --url signs in by itself (or ahead of time: mcpshim auth login --url " + orUnknown(f.URL) +
			"), or pass a token with --header 'Authorization: Bearer ${TOKEN}' and TOKEN in the entry's env"
		if f.OwnCredential {
			v.Advice = "the credential given with --header Authorization was refused: renew it, or drop the header and let mcpshim sign in (OAuth)"
		}
	case !j.done && f.Redirect != "":
		// The handshake went elsewhere: the bridge follows only a 307 or 308
		// to the same origin, so that credentials go nowhere else.
		j.set(Unreachable, "redirected: "+f.Redirect, true)
		v.Reason = "the server redirected the handshake (" + f.Redirect + "); not followed"
		v.Advice = "if the new address is the server's, put it in --url: mcpshim follows only a 307 or 308 to the same origin, so that credentials go nowhere else"
	case !j.done && (f.GaveUp != "" || f.HTTPStatus >= 500 || f.HTTPStatus == 0 && f.HTTPFailure != ""):
		j.set(Unreachable, j.httpCause(), false)
		v.Reason, v.Advice = j.httpCause(), j.unreachableAdvice()
	case !j.done && f.HTTPStatus >= 400:
		j.set(ProtocolError, j.httpCause(), true)
		v.Reason = j.httpCause() + ": is " + orUnknown(f.URL) + " the server's MCP endpoint?"
		v.Advice = "the server answered the handshake with an HTTP error, not JSON-RPC: check the URL's path"
	case !j.done && j.gaveUpWaiting():
		j.set(Timeout, "", false)
		v.Reason, v.Advice = j.timeoutReason(), "the server took the request and never answered: look at the server's own logs"
	case !j.done && j.ended:
		j.set(Ended, "", false)
		v.Reason, v.Advice = "the client left "+FormatMS(j.waited)+" after connecting, before the handshake", leftEarlyAdvice
	case !j.done:
		j.running(Running, v.Alive)
	case f.GaveUp != "":
		j.set(Unreachable, j.httpCause(), false)
		v.Reason = "unreachable " + j.sinceHandshake() + ": " + j.httpCause()
		v.Advice = j.unreachableAdvice()
	case j.ended && j.requestFailed():
	case j.ended:
		j.set(Ended, "", false)
		v.Reason, v.Advice = j.endedReason(), j.endedAdvice()
	default:
		j.running(Ready, v.Alive)
	}
}

// authStages names oauth's stages (auth_failed's stage) in words.
var authStages = map[string]string{
	"resource_metadata": "the server's resource metadata", "server_metadata": "the authorization server's metadata",
	"registration": "the client's registration", "authorization": "the authorization step", "token": "the token request",
	"refresh": "the refresh", "scope": "the scope", "store": "the token store",
}

// firstClause is a message up to what it says to run: the advice says that.
func firstClause(msg string) string {
	if i := strings.Index(msg, ": open the URL"); i > 0 {
		return msg[:i]
	}
	if i := strings.Index(msg, ": sign in again"); i > 0 {
		return msg[:i]
	}
	return msg
}

// signInAdvice says what to do where signing in stopped.
func (j *judgement) signInAdvice() string {
	login := "mcpshim auth login --url " + orUnknown(j.f.URL)
	switch j.f.AuthStage {
	case "resource_metadata", "server_metadata":
		return "the server's OAuth metadata is missing or wrong (see the reason): tell the server's operator; meanwhile a token of your own works with --header 'Authorization: Bearer ${TOKEN}'"
	case "registration":
		return "the authorization server took no client: register one there and pass --oauth-client-id (and --oauth-client-secret)"
	case "scope":
		return "the account lacks a scope the server wants: sign in as a user who has it with " + login
	case "store":
		return "the token directory could not be used: check $XDG_CONFIG_HOME/mcpshim/auth"
	}
	return "sign in ahead of time with " + login + ", then reconnect"
}

// httpCause is the last failed exchange: "HTTP 503 Service Unavailable at
// initialize", "connection refused"; or the bridge's own reason.
func (j *judgement) httpCause() string {
	f := j.f
	if f.HTTPFailure == "" {
		return orUnknown(f.GaveUp)
	}
	if f.HTTPFailMethod != "" {
		return f.HTTPFailure + " at " + f.HTTPFailMethod
	}
	return f.HTTPFailure
}

func (j *judgement) unreachableAdvice() string {
	if j.f.Paged > 0 && !j.f.Exhausted {
		// Seed 004's page is a signal to a person, not an exit.
		return "paged after " + Plural(j.f.Paged, "consecutive failure") + ": the bridge keeps retrying, up to every 30 s, and reconnects by itself when the server is back (--give-up-after to stop)"
	}
	if j.f.Exhausted {
		return "the bridge gave up after " + Plural(j.f.Attempts, "failure") + ": the server is down or unreachable; a retry helps once it is back"
	}
	return "the server is down or unreachable: only time (or its operator) fixes it; the bridge retries with backoff"
}

func orUnknown(s string) string {
	if s == "" {
		return "the server"
	}
	return s
}
