package verdict

// remote judges a run of a remote server (mcpshim --url, or a probe over
// HTTP): a connection, no process. Its records are connected or
// connect_failed, http_exchange per request, auth_failed for a 401 or 403,
// and disconnected (exit_code 69 when the bridge ended it failed).
func (j *judgement) remote() {
	f, v := j.f, &j.v
	auth := f.At.AuthFailed.Set() && (!j.ended || f.At.AuthFailed.Before(f.At.End))
	switch {
	case f.SpawnFailed:
		j.set(Unreachable, f.Error, false)
		v.Reason = "cannot connect to " + orUnknown(f.URL) + ": " + f.Error
		v.Advice = j.unreachableAdvice()
	case !j.done && j.refusal != "":
		j.set(ProtocolError, j.refusal, true)
		v.Reason, v.Advice = j.refusalReason(), refusalAdvice
	case auth:
		c := j.httpCause()
		if f.Challenge != "" {
			c += "; WWW-Authenticate: " + f.Challenge
		}
		j.set(AuthRequired, c, true)
		v.Reason = c
		v.Advice = "the server wants a credential: pass it with --header 'Authorization: Bearer ${TOKEN}' and TOKEN in the entry's env"
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
	case j.ended:
		j.set(Ended, "", false)
		v.Reason, v.Advice = j.endedReason(), j.endedAdvice()
	default:
		j.running(Ready, v.Alive)
	}
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
