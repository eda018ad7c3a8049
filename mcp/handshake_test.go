package mcp

import (
	"fmt"
	"testing"
)

// TestParseHello: what a server says of itself, from either era's answer,
// and what is kept when part of it cannot be read.
func TestParseHello(t *testing.T) {
	tests := []struct {
		name, result string
		discover     bool
		want         string // version|supported|server|caps|listChanged
		wantErr      bool
	}{
		{"initialize", `{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"logging":{}},"serverInfo":{"name":"s","version":"1"}}`, false,
			"2025-11-25|[]|s 1|[logging tools]|true", false},
		{"initialize without serverInfo", `{"protocolVersion":"2025-06-18","capabilities":{}}`, false, "2025-06-18|[]| |[]|false", false},
		{"initialize, serverInfo not an object", `{"protocolVersion":"2025-06-18","serverInfo":"x"}`, false, "2025-06-18|[]| |[]|false", true},
		{"initialize, not JSON", `{"protocolVersion":`, false, "|[]| |[]|false", true},
		{"discover", `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"m","version":"2"}}}`, true,
			"|[2026-07-28]|m 2|[tools]|false", false},
		{"discover, serverInfo unreadable", `{"supportedVersions":["2026-07-28"],"_meta":{"io.modelcontextprotocol/serverInfo":7}}`, true, "|[2026-07-28]| |[]|false", false},
	}
	for _, tt := range tests {
		parse := ParseInitializeResult
		if tt.discover {
			parse = ParseDiscoverResult
		}
		h, err := parse([]byte(tt.result))
		s := h.Server()
		got := fmt.Sprintf("%s|%v|%s %s|%v|%v", h.ProtocolVersion, h.SupportedVersions, s.Name, s.Version, h.CapabilityNames(), h.ToolsListChanged())
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("%s: parse(%s) = %s, err %v; want %s, error %v", tt.name, tt.result, got, err, tt.want, tt.wantErr)
		}
	}
}

// TestClientHello: the version and client a request names, in either era.
func TestClientHello(t *testing.T) {
	v, c := InitializeParams([]byte(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"claude-code","version":"2.1"}}`))
	if v != "2025-11-25" || c.Name != "claude-code" || c.Version != "2.1" {
		t.Errorf("InitializeParams = %q %+v, want 2025-11-25 claude-code 2.1", v, c)
	}
	v, c = RequestMeta([]byte(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c"}}}`))
	if v != "2026-07-28" || c.Name != "c" {
		t.Errorf("RequestMeta = %q %+v, want 2026-07-28 c", v, c)
	}
	if v, c = RequestMeta([]byte(`{"cursor":"x"}`)); v != "" || c.Name != "" {
		t.Errorf("RequestMeta of a legacy request = %q %+v, want nothing", v, c)
	}
}
