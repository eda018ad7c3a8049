package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/redact"
	"github.com/mcpshim-dev/mcpshim/sse"
)

// deleteTimeout bounds the courtesy DELETE that ends a legacy HTTP session.
const deleteTimeout = 500 * time.Millisecond

// httpTransport speaks Streamable HTTP: one POST per message, the reply as
// JSON or as an event stream, Mcp-Session-Id carried in the legacy era and
// none in the modern one.
type httpTransport struct {
	target Target
	client *http.Client
	wrote  atomic.Bool
	flight sync.WaitGroup // requests still running

	mu        sync.Mutex
	sessionID string
}

func newHTTPTransport(t Target) *httpTransport {
	// A transport of its own, so stop can close its connections; it uses no
	// proxy, as MCP clients use none by default.
	return &httpTransport{target: t, client: &http.Client{Transport: &http.Transport{}, CheckRedirect: sameOriginOnly}}
}

// sameOriginOnly follows only a 307 or 308 to the same origin, as the
// bridge does: Go's client sends the headers on to another port of the same
// host, and turns a 302 into a GET that carries them (issue 23). Any other
// redirect is the reply, an HTTP error.
func sameOriginOnly(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	if len(via) > 5 || req.URL.Scheme != first.Scheme || req.URL.Host != first.Host || req.Response == nil ||
		(req.Response.StatusCode != http.StatusTemporaryRedirect && req.Response.StatusCode != http.StatusPermanentRedirect) {
		return http.ErrUseLastResponse
	}
	return nil
}

func (h *httpTransport) delivered() bool { return h.wrote.Load() }

func (h *httpTransport) session() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessionID
}

func (h *httpTransport) send(ctx context.Context, req request) <-chan answer {
	ch := make(chan answer, 1)
	h.flight.Add(1)
	// One exchange: returns when post does (every wait bounded by ctx);
	// stop waits for it through flight.
	go func() {
		defer h.flight.Done()
		ch <- h.post(ctx, req)
	}()
	return ch
}

func (h *httpTransport) notify(ctx context.Context, req request) error {
	return h.post(ctx, req).err
}

// post sends one message and reads its reply. Every wait, the connection,
// the headers and the body, is bounded by ctx.
func (h *httpTransport) post(ctx context.Context, req request) answer {
	body, err := req.encode()
	if err != nil {
		return answer{at: time.Now(), err: &protocolError{fmt.Sprintf("encode %s: %v", req.Method, err)}}
	}
	trace := &httptrace.ClientTrace{WroteRequest: func(info httptrace.WroteRequestInfo) {
		if info.Err == nil {
			h.wrote.Store(true)
		}
	}}
	hreq, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost, h.target.URL, bytes.NewReader(body))
	if err != nil {
		return answer{at: time.Now(), err: &unreachableError{err}}
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range h.target.Headers {
		hreq.Header.Set(k, v)
	}
	if req.Version != "" {
		hreq.Header.Set("Mcp-Protocol-Version", req.Version)
	}
	if req.Version >= mcp.ModernVersion {
		// The modern era's standard headers, checked against the body by servers.
		hreq.Header.Set("Mcp-Method", req.Method)
		if name := toolName(req); name != "" {
			hreq.Header.Set("Mcp-Name", name)
		}
	}
	if sid := h.session(); sid != "" {
		hreq.Header.Set("Mcp-Session-Id", sid)
	}

	resp, err := h.client.Do(hreq)
	if err != nil {
		return answer{at: time.Now(), err: httpFailure(ctx, err)}
	}
	defer resp.Body.Close()
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" && req.Method == mcp.MethodInitialize {
		h.mu.Lock()
		h.sessionID = sid
		h.mu.Unlock()
	}
	a := h.reply(ctx, req, resp)
	a.at = time.Now()
	return a
}

func toolName(req request) string {
	if req.Method != mcp.MethodCallTool {
		return ""
	}
	params, _ := req.Params.(map[string]any)
	name, _ := params["name"].(string)
	return name
}

// httpFailure sorts a failed round trip: the deadline, a connection that
// could not be made, or a server that broke off.
func httpFailure(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var dns *net.DNSError
	var op *net.OpError
	if errors.As(err, &dns) || (errors.As(err, &op) && op.Op == "dial") {
		return &unreachableError{err}
	}
	return &protocolError{err.Error()}
}

// realmRE is compiled on first use: a shim never probes, and it starts sooner.
var realmRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\brealm="?([^",]*)"?`) })

func (h *httpTransport) reply(ctx context.Context, req request, resp *http.Response) answer {
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		se := &statusError{code: resp.StatusCode, status: resp.Status, authenticate: resp.Header.Get("WWW-Authenticate")}
		if m := realmRE().FindStringSubmatch(se.authenticate); m != nil {
			se.realm = m[1]
		}
		return answer{err: se}
	}
	if resp.StatusCode/100 == 3 { // not followed (sameOriginOnly)
		loc, _ := resp.Location()
		return answer{err: &statusError{code: resp.StatusCode, status: resp.Status, location: redact.URL(loc)}}
	}
	ok := resp.StatusCode/100 == 2
	if req.ID == 0 {
		if ok {
			return answer{} // a notification needs no reply
		}
		return answer{err: &statusError{code: resp.StatusCode, status: resp.Status}}
	}
	ctype, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ctype {
	case "application/json":
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxLine))
		if err != nil {
			return answer{err: httpFailure(ctx, err)}
		}
		if a, found := matchReply(data, req.ID); found {
			return a // a JSON-RPC error may come with a 4xx status; it is the answer
		}
		if !ok {
			return answer{err: &statusError{code: resp.StatusCode, status: resp.Status}}
		}
		return answer{err: &protocolError{fmt.Sprintf("reply to %s is not its JSON-RPC response: %q", req.Method, truncate(string(data), 120))}}
	case "text/event-stream":
		if !ok {
			return answer{err: &statusError{code: resp.StatusCode, status: resp.Status}}
		}
		return readEvents(ctx, resp.Body, req)
	}
	if !ok {
		return answer{err: &statusError{code: resp.StatusCode, status: resp.Status}}
	}
	return answer{err: &protocolError{fmt.Sprintf("reply to %s has Content-Type %q", req.Method, resp.Header.Get("Content-Type"))}}
}

// readEvents reads an event stream until the response to req arrives,
// skipping the server's notifications and requests. It is the bridge's
// parser (lines end with CRLF, LF or a lone CR), each event bounded by
// maxLine.
func readEvents(ctx context.Context, body io.Reader, req request) answer {
	events := sse.NewReader(body, maxLine)
	for {
		ev, err := events.Next()
		if err == sse.ErrTooLarge {
			return answer{err: &protocolError{fmt.Sprintf("event stream for %s has an event over %d bytes", req.Method, maxLine)}}
		}
		if err != nil {
			if ctx.Err() != nil {
				return answer{err: ctx.Err()}
			}
			return answer{err: &protocolError{fmt.Sprintf("event stream for %s ended without its response", req.Method)}}
		}
		if a, found := matchReply(ev.Data, req.ID); found {
			return a
		}
	}
}

// matchReply finds the response to id in a JSON-RPC message.
func matchReply(data []byte, id int64) (answer, bool) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if json.Unmarshal(data, &m) != nil || (m.Result == nil && m.Error == nil) {
		return answer{}, false
	}
	v, _ := mcp.ParseID(m.ID)
	if got, ok := v.Int(); !ok || got != id { // a value: a peer may answer 1 as 1.0
		// An error the server could not tie to a request is still its answer.
		if m.Error != nil && (m.ID == nil || string(m.ID) == "null") {
			return answer{rpcErr: m.Error}, true
		}
		return answer{}, false
	}
	return answer{result: m.Result, rpcErr: m.Error}, true
}

// stop waits out the requests still running (their context is already
// over) and ends a legacy session with a DELETE, as the transport asks.
func (h *httpTransport) stop(r *Result) {
	h.flight.Wait()
	detail := "connections closed"
	if sid := h.session(); sid != "" {
		ctx, cancel := context.WithTimeout(context.Background(), deleteTimeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodDelete, h.target.URL, nil)
		if err == nil {
			req.Header.Set("Mcp-Session-Id", sid)
			for k, v := range h.target.Headers {
				req.Header.Set(k, v)
			}
			if resp, err := h.client.Do(req); err == nil {
				resp.Body.Close()
				detail = "session deleted"
			}
		}
	}
	h.client.CloseIdleConnections()
	r.Timeline = append(r.Timeline, Step{At: time.Now(), Event: "stopped", Detail: detail})
}
