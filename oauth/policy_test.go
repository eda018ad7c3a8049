package oauth

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
)

func TestParseChallenges(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []Challenge
	}{
		{`Bearer realm="mcp", error="invalid_token", resource_metadata="https://x/.well-known/oauth-protected-resource"`,
			[]Challenge{{"Bearer", map[string]string{"realm": "mcp", "error": "invalid_token", "resource_metadata": "https://x/.well-known/oauth-protected-resource"}}}},
		{`Bearer`, []Challenge{{"Bearer", map[string]string{}}}},
		{`Basic abc==, Bearer scope="a b"`, []Challenge{{"Basic", map[string]string{}}, {"Bearer", map[string]string{"scope": "a b"}}}},
		{`Bearer error="insufficient_scope",scope="files:read files:write", Basic realm="y"`,
			[]Challenge{{"Bearer", map[string]string{"error": "insufficient_scope", "scope": "files:read files:write"}}, {"Basic", map[string]string{"realm": "y"}}}},
		{`Bearer realm="a \"quoted\" \\ word", SCOPE=token`, []Challenge{{"Bearer", map[string]string{"realm": `a "quoted" \ word`, "scope": "token"}}}},
		{`DPoP algs="ES256", Bearer resource_metadata="u"`, []Challenge{{"DPoP", map[string]string{"algs": "ES256"}}, {"Bearer", map[string]string{"resource_metadata": "u"}}}},
		{`Bearer realm="unterminated`, []Challenge{{"Bearer", map[string]string{"realm": "unterminated"}}}},
		{`, , Bearer ,`, []Challenge{{"Bearer", map[string]string{}}}},
	} {
		if got := ParseChallenges(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseChallenges(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if c, ok := Bearer([]string{`Basic realm="x"`, `bearer scope="s"`}); !ok || c.Param("scope") != "s" {
		t.Errorf("Bearer over two headers = %v %v, want the second's scope", c, ok)
	}
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

func TestMetadataOrder(t *testing.T) {
	for _, tc := range []struct {
		server string
		want   []string
	}{
		{"https://example.com/public/mcp", []string{"https://example.com/.well-known/oauth-protected-resource/public/mcp", "https://example.com/.well-known/oauth-protected-resource"}},
		{"https://example.com/mcp/", []string{"https://example.com/.well-known/oauth-protected-resource/mcp", "https://example.com/.well-known/oauth-protected-resource"}},
		{"https://example.com", []string{"https://example.com/.well-known/oauth-protected-resource"}},
		{"https://example.com/", []string{"https://example.com/.well-known/oauth-protected-resource"}},
		{"https://example.com/mcp?tenant=a", []string{"https://example.com/.well-known/oauth-protected-resource/mcp?tenant=a", "https://example.com/.well-known/oauth-protected-resource"}},
	} {
		if got := resourceMetadataURLs(mustURL(tc.server)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("resourceMetadataURLs(%s) = %v, want %v", tc.server, got, tc.want)
		}
	}
	for _, tc := range []struct {
		issuer string
		want   []string
	}{
		{"https://auth.example.com/tenant1", []string{
			"https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
			"https://auth.example.com/.well-known/openid-configuration/tenant1",
			"https://auth.example.com/tenant1/.well-known/openid-configuration"}},
		{"https://auth.example.com", []string{
			"https://auth.example.com/.well-known/oauth-authorization-server",
			"https://auth.example.com/.well-known/openid-configuration"}},
		{"https://auth.example.com/", []string{
			"https://auth.example.com/.well-known/oauth-authorization-server",
			"https://auth.example.com/.well-known/openid-configuration"}},
	} {
		if got := serverMetadataURLs(mustURL(tc.issuer)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("serverMetadataURLs(%s) = %v, want %v", tc.issuer, got, tc.want)
		}
	}
}

func TestCheckResource(t *testing.T) {
	server := mustURL("https://mcp.example.com/server/mcp")
	for _, tc := range []struct {
		resource, err string
	}{
		{"https://mcp.example.com/server/mcp", ""},
		{"https://mcp.example.com/server/mcp/", ""},
		{"https://mcp.example.com", ""},
		{"https://MCP.example.com:443/server", ""},
		{"https://mcp.example.com/serv", "does not cover"},
		{"https://mcp.example.com/other/mcp", "does not cover"},
		{"https://evil.example.com/server/mcp", "not this server"},
		{"http://mcp.example.com/server/mcp", "not this server"},
		{"https://mcp.example.com:8443/server/mcp", "not this server"},
		{"https://mcp.example.com/server/mcp#frag", "fragment"},
		{"mcp.example.com/server/mcp", "not an absolute URL"},
		{"", "not an absolute URL"},
	} {
		err := checkResource(server, tc.resource)
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("checkResource(%q) = %v, want %q", tc.resource, err, tc.err)
		}
	}
}

func TestChooseScopes(t *testing.T) {
	prm := &ResourceMetadata{ScopesSupported: []string{"mcp:read", "mcp:write"}}
	asOffline := &ServerMetadata{ScopesSupported: []string{"mcp:read", "offline_access"}}
	for _, tc := range []struct {
		name      string
		challenge string
		prm       *ResourceMetadata
		as        *ServerMetadata
		previous  []string
		want      []string
	}{
		{"the challenge wins", "files:read", prm, nil, nil, []string{"files:read"}},
		{"else scopes_supported", "", prm, nil, nil, []string{"mcp:read", "mcp:write"}},
		{"else none", "", &ResourceMetadata{}, nil, nil, nil},
		{"no metadata, none", "", nil, nil, nil, nil},
		{"step-up keeps what was asked", "mcp:write", prm, nil, []string{"mcp:basic"}, []string{"mcp:basic", "mcp:write"}},
		{"offline_access when the server lists it", "", prm, asOffline, nil, []string{"mcp:read", "mcp:write", "offline_access"}},
		{"never offline_access alone", "", nil, asOffline, nil, nil},
		{"no offline_access unlisted", "mcp:basic", nil, &ServerMetadata{ScopesSupported: []string{"mcp:basic"}}, nil, []string{"mcp:basic"}},
	} {
		if got := chooseScopes(tc.challenge, tc.prm, tc.as, tc.previous); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: chooseScopes = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestCheckIss(t *testing.T) {
	const iss = "https://auth.example.com"
	for _, tc := range []struct {
		advertised bool
		resp       authResponse
		ok         bool
	}{
		{true, authResponse{iss: iss, hasIss: true}, true},
		{true, authResponse{}, false},
		{false, authResponse{iss: iss, hasIss: true}, true},
		{false, authResponse{}, true},
		{true, authResponse{iss: "https://evil.example.com", hasIss: true}, false},
		{false, authResponse{iss: "https://evil.example.com", hasIss: true}, false},
		// No normalization: a trailing slash, a case change or a default port is another issuer.
		{true, authResponse{iss: iss + "/", hasIss: true}, false},
		{true, authResponse{iss: "https://AUTH.example.com", hasIss: true}, false},
		{true, authResponse{iss: "https://auth.example.com:443", hasIss: true}, false},
		// The error of a response from another issuer is not acted on.
		{false, authResponse{iss: "https://evil.example.com", hasIss: true, err: "access_denied"}, false},
	} {
		err := checkIss(tc.resp, &ServerMetadata{Issuer: iss, IssParameterSupported: tc.advertised})
		if (err == nil) != tc.ok {
			t.Errorf("checkIss(advertised %v, %+v) = %v, want ok %v", tc.advertised, tc.resp, err, tc.ok)
		}
	}
}

func TestAuthMethod(t *testing.T) {
	for _, tc := range []struct {
		client    Client
		supported []string
		want      string
	}{
		{Client{ID: "a", AuthMethod: AuthPost, Secret: "s"}, []string{AuthBasic}, AuthPost},
		{Client{ID: "a"}, nil, AuthNone},
		{Client{ID: "a", Secret: "s"}, nil, AuthBasic},
		{Client{ID: "a", Secret: "s"}, []string{AuthPost}, AuthPost},
		{Client{ID: "a", Secret: "s"}, []string{AuthPost, AuthBasic}, AuthBasic},
	} {
		if got := authMethod(&tc.client, &ServerMetadata{TokenEndpointAuthMethodsSupported: tc.supported}); got != tc.want {
			t.Errorf("authMethod(%+v, %v) = %s, want %s", tc.client, tc.supported, got, tc.want)
		}
	}
}
