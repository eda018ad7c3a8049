package testfixtures

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// shimErrorCode is the code of the answers mcpshim owes a client for a
// server that cannot answer.
const shimErrorCode = -31000

// FaultGot is what the fault client got for the first request of its
// session that did not get a usable result, or "result" when every one did.
type FaultGot struct {
	Method string // the request, "" when every request was answered
	What   string // result, error (Code, Message), none (no answer in its patience), eof (the stream ended), left (it did not wait), version (an unasked protocol version)
	Code   int
	Msg    string
}

func (g FaultGot) String() string {
	switch g.What {
	case "error":
		return fmt.Sprintf("%s: error %d %s", g.Method, g.Code, g.Msg)
	case "result", "left":
		return g.What
	}
	return g.Method + ": " + g.What
}

// PlayFaultClient is the client side of sp over c: its opening (legacy
// initialize; modern server/discover; dual server/discover, then initialize
// if that is refused), notifications/initialized in the legacy era,
// tools/list and one tools/call of echo, each awaited for patience(method). It skips
// lines that are not JSON-RPC, as Claude Code does, and answers the server's
// sampling request unless sp.Then is noanswer. With Then leave it sends its
// opening and returns at once. It stops at the first request that gets no
// result, and leaves closing stdin to its caller.
func PlayFaultClient(ctx context.Context, sp FaultSpec, c *Client, patience func(method string) time.Duration) FaultGot {
	c.OnNoise = func([]byte) {}
	legacyInit := `{"protocolVersion":"` + latestLegacyVersion + `","capabilities":{},"clientInfo":{"name":"truth","version":"1"}}`
	meta := `{"_meta":{"` + metaProtocolVersion + `":"` + modernVersion + `","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"truth","version":"1"}}}`
	first, params := "initialize", legacyInit
	if sp.Open != "legacy" {
		first, params = "server/discover", meta
	}
	if sp.Then == "leave" {
		msg, _ := Request("1", first, params)
		c.Send(msg)
		return FaultGot{What: "left"}
	}
	era := "legacy"
	got := faultCall(ctx, c, sp, patience, "1", first, params)
	if first == "server/discover" {
		era = "modern"
		// The shim's own -31000 says the server is gone, not that it
		// refuses the era: only the server's refusal is a reason to fall back.
		if got.What == "error" && got.Code != shimErrorCode && sp.Open == "dual" {
			era = "legacy"
			got = faultCall(ctx, c, sp, patience, "2", "initialize", legacyInit)
		}
	}
	if got.What != "result" {
		return got
	}
	if !faultVersionOK(got.Msg, era) {
		return FaultGot{Method: got.Method, What: "version"}
	}
	listParams, callParams := "", `{"name":"echo","arguments":{"text":"hi"}}`
	if era == "legacy" {
		c.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	} else {
		listParams, callParams = meta, `{"name":"echo","arguments":{"text":"hi"},`+meta[1:]
	}
	if got := faultCall(ctx, c, sp, patience, "3", "tools/list", listParams); got.What != "result" {
		return got
	}
	if got := faultCall(ctx, c, sp, patience, "4", "tools/call", callParams); got.What != "result" {
		return got
	}
	return FaultGot{What: "result"}
}

// faultCall sends one request and waits patience for its answer; a result
// comes back with What result and the line in Msg.
func faultCall(ctx context.Context, c *Client, sp FaultSpec, patience func(string) time.Duration, id, method, params string) FaultGot {
	msg, _ := Request(id, method, params)
	if err := c.Send(msg); err != nil {
		return FaultGot{Method: method, What: "eof"}
	}
	ctx, cancel := context.WithTimeout(ctx, patience(method))
	defer cancel()
	for {
		line, err := c.ReadLine(ctx)
		if errors.Is(err, context.DeadlineExceeded) {
			return FaultGot{Method: method, What: "none"}
		}
		if err != nil {
			return FaultGot{Method: method, What: "eof"}
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Error  *rpcError       `json:"error"`
		}
		if json.Unmarshal(line, &m) != nil {
			continue // noise, skipped
		}
		switch {
		case m.Method != "" && m.ID != nil && sp.Then != "noanswer":
			c.Send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"role":"assistant","content":{"type":"text","text":"ok"},"model":"truth"}}`)
		case m.Method != "":
		case !sameID(m.ID, id):
		case m.Error != nil:
			return FaultGot{Method: method, What: "error", Code: m.Error.Code, Msg: m.Error.Message}
		default:
			return FaultGot{Method: method, What: "result", Msg: string(line)}
		}
	}
}

// faultVersionOK: the handshake answer names a version the client asked for.
func faultVersionOK(line, era string) bool {
	var m struct {
		Result struct {
			ProtocolVersion   string   `json:"protocolVersion"`
			SupportedVersions []string `json:"supportedVersions"`
		} `json:"result"`
	}
	if json.Unmarshal([]byte(line), &m) != nil {
		return false
	}
	if era == "legacy" {
		return slices.Contains(legacyVersions, m.Result.ProtocolVersion)
	}
	return slices.Contains(m.Result.SupportedVersions, modernVersion)
}
