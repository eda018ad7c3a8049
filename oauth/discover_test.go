package oauth

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// metaServer serves JSON documents at fixed paths and records every GET.
type metaServer struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
	docs  map[string]func(base string) any
}

func newMetaServer(t *testing.T, docs map[string]func(base string) any) *metaServer {
	m := &metaServer{docs: docs}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		m.paths = append(m.paths, r.URL.Path)
		m.mu.Unlock()
		d, ok := m.docs[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(d("http://" + r.Host))
	}))
	t.Cleanup(m.Close)
	return m
}

func (m *metaServer) got() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.paths...)
}

func newSession(t *testing.T, server string) *Session {
	s, err := New(Config{Server: mustURL(server)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func asDoc(issuerPath string) func(string) any {
	return func(base string) any {
		return map[string]any{"issuer": base + issuerPath, "authorization_endpoint": base + "/a", "token_endpoint": base + "/t", "code_challenge_methods_supported": []string{"S256"}}
	}
}

// TestDiscoveryOrder: the resource metadata at the root only, reached after
// the path location; the issuer with a path, its metadata at the last of the
// three locations; every location asked in the spec's order and nothing
// else. The resource indicator is the published resource, pathless, with no
// slash added.
func TestDiscoveryOrder(t *testing.T) {
	m := newMetaServer(t, map[string]func(string) any{
		"/.well-known/oauth-protected-resource": func(base string) any {
			return map[string]any{"resource": base, "authorization_servers": []string{base + "/tenant1"}}
		},
		"/tenant1/.well-known/openid-configuration": asDoc("/tenant1"),
	})
	s := newSession(t, m.URL+"/mcp")
	tg, err := s.discover(context.Background(), Challenge{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"/.well-known/oauth-protected-resource/mcp",
		"/.well-known/oauth-protected-resource",
		"/.well-known/oauth-authorization-server/tenant1",
		"/.well-known/openid-configuration/tenant1",
		"/tenant1/.well-known/openid-configuration",
	}
	if got := m.got(); !reflect.DeepEqual(got, want) {
		t.Errorf("requests = %v\nwant %v", got, want)
	}
	if tg.resource != m.URL || tg.as.Issuer != m.URL+"/tenant1" {
		t.Errorf("resource %q issuer %q, want %q and %q", tg.resource, tg.as.Issuer, m.URL, m.URL+"/tenant1")
	}
}

// TestDiscoveryChallengeFirst: the challenge's resource_metadata is read and
// nothing else.
func TestDiscoveryChallengeFirst(t *testing.T) {
	m := newMetaServer(t, map[string]func(string) any{
		"/custom/prm.json": func(base string) any {
			return map[string]any{"resource": base + "/mcp", "authorization_servers": []string{base}}
		},
		"/.well-known/oauth-authorization-server": asDoc(""),
	})
	s := newSession(t, m.URL+"/mcp")
	if _, err := s.discover(context.Background(), Challenge{Params: map[string]string{"resource_metadata": m.URL + "/custom/prm.json"}}); err != nil {
		t.Fatal(err)
	}
	if got, want := m.got(), []string{"/custom/prm.json", "/.well-known/oauth-authorization-server"}; !reflect.DeepEqual(got, want) {
		t.Errorf("requests = %v, want %v", got, want)
	}
}

func TestDiscoveryRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		docs map[string]func(string) any
		want string
	}{
		{"another resource", map[string]func(string) any{
			"/.well-known/oauth-protected-resource/mcp": func(base string) any {
				return map[string]any{"resource": "https://evil.example.com/mcp", "authorization_servers": []string{base}}
			},
			"/.well-known/oauth-authorization-server": asDoc(""),
		}, "refusing to sign in for another resource"},
		{"an issuer that is not the one asked", map[string]func(string) any{
			"/.well-known/oauth-protected-resource/mcp": func(base string) any {
				return map[string]any{"resource": base + "/mcp", "authorization_servers": []string{base}}
			},
			"/.well-known/oauth-authorization-server": func(base string) any {
				return map[string]any{"issuer": "https://honest.example", "authorization_endpoint": base + "/a", "token_endpoint": base + "/t", "code_challenge_methods_supported": []string{"S256"}}
			},
		}, `says issuer "https://honest.example"`},
		{"no authorization server", map[string]func(string) any{
			"/.well-known/oauth-protected-resource/mcp": func(base string) any { return map[string]any{"resource": base + "/mcp"} },
		}, "names no authorization_servers"},
	} {
		m := newMetaServer(t, tc.docs)
		s := newSession(t, m.URL+"/mcp")
		_, err := s.discover(context.Background(), Challenge{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: discover = %v, want %q", tc.name, err, tc.want)
		}
	}
}

// Test20250326: no resource metadata: the origin's authorization server
// metadata, then the default endpoints.
func Test20250326(t *testing.T) {
	m := newMetaServer(t, map[string]func(string) any{"/.well-known/oauth-authorization-server": asDoc("")})
	tg, err := newSession(t, m.URL+"/v1/mcp").discover(context.Background(), Challenge{})
	if err != nil || tg.as.URL == "" || tg.resource != m.URL+"/v1/mcp" {
		t.Errorf("with root metadata: %+v, %v", tg, err)
	}
	bare := newMetaServer(t, nil)
	tg, err = newSession(t, bare.URL+"/v1/mcp").discover(context.Background(), Challenge{})
	if err != nil || tg.as.AuthorizationEndpoint != bare.URL+"/authorize" || tg.as.TokenEndpoint != bare.URL+"/token" || tg.as.RegistrationEndpoint != bare.URL+"/register" {
		t.Errorf("without metadata: %+v, %v; want the default endpoints", tg.as, err)
	}
}

func TestRefusePlainHTTPAuthServer(t *testing.T) {
	s := newSession(t, "https://mcp.example.com/mcp")
	if err := s.checkEndpoint("token_endpoint", "http://auth.example.com/token"); err == nil {
		t.Errorf("a plain http token endpoint for an https server was accepted")
	}
	if err := s.checkEndpoint("token_endpoint", "javascript:alert(1)"); err == nil {
		t.Errorf("a javascript: endpoint was accepted")
	}
	if err := s.checkEndpoint("token_endpoint", "http://127.0.0.1:9/token"); err != nil {
		t.Errorf("a loopback endpoint was refused: %v", err)
	}
}
