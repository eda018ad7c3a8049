package oauth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/oauth"
	"github.com/mcpshim-dev/mcpshim/oauth/oauthtest"
	"github.com/mcpshim-dev/mcpshim/safefile"
)

// steps collects a Session's steps.
type steps struct {
	mu  sync.Mutex
	all []oauth.Step
}

func (s *steps) add(st oauth.Step) {
	s.mu.Lock()
	s.all = append(s.all, st)
	s.mu.Unlock()
}

func (s *steps) events() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for _, st := range s.all {
		names = append(names, st.Event)
	}
	return strings.Join(names, " ")
}

func (s *steps) last(event string) oauth.Step {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.all) - 1; i >= 0; i-- {
		if s.all[i].Event == event {
			return s.all[i]
		}
	}
	return oauth.Step{}
}

func session(t *testing.T, srv *oauthtest.Servers, store *oauth.Store, st *steps, mod func(*oauth.Config)) *oauth.Session {
	t.Helper()
	u, _ := url.Parse(srv.MCPURL())
	cfg := oauth.Config{Server: u, Store: store, Open: oauthtest.Browser, Notify: st.add, BrowserWait: 30 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	s, err := oauth.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// call sends a request to the protected endpoint with the session's header.
func call(t *testing.T, srv *oauthtest.Servers, s *oauth.Session) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.MCPURL(), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	h := s.Header(context.Background())
	if h != "" {
		req.Header.Set("Authorization", h)
	}
	if p := s.Proof(req.Method, req.URL.String()); p != "" {
		req.Header.Set("DPoP", p)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header, h
}

// signIn sends a request, and on a challenge lets the session answer it and
// sends it again, as the bridge does; it returns the last status.
func signIn(t *testing.T, srv *oauthtest.Servers, s *oauth.Session) int {
	t.Helper()
	for range 3 {
		status, ch, sent := call(t, srv, s)
		if status != http.StatusUnauthorized && status != http.StatusForbidden {
			s.Accepted(sent) // as the bridge tells it
			return status
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := s.Challenged(ctx, status, ch, sent)
		cancel()
		if err != nil {
			t.Logf("Challenged(%d): %v", status, err)
			return status
		}
	}
	status, _, _ := call(t, srv, s)
	return status
}

func TestAuthorizationCodeDynamicRegistration(t *testing.T) {
	srv := oauthtest.Start(t, oauthtest.Options{ScopesSupported: []string{"mcp:read", "mcp:write"}, Scopes: []string{"mcp:read"}})
	store := &oauth.Store{Dir: filepath.Join(t.TempDir(), "auth")}
	var st steps
	s := session(t, srv, store, &st, nil)
	if got := signIn(t, srv, s); got != http.StatusOK {
		t.Fatalf("status after sign-in = %d, want 200\nsteps: %s\nserver: %s", got, st.events(), srv.Log())
	}
	if got, want := st.events(), "auth_required authorization_started authorized"; got != want {
		t.Errorf("steps = %q, want %q", got, want)
	}
	a := srv.Authorize()[0]
	if a.Get("resource") != srv.MCPURL() || a.Get("scope") != "mcp:read mcp:write" || a.Get("code_challenge_method") != "S256" {
		t.Errorf("authorization request = %v, want resource %s, scope from scopes_supported, S256", a, srv.MCPURL())
	}
	if reg := srv.Registers()[0]; reg["application_type"] != "native" || reg["token_endpoint_auth_method"] != "none" {
		t.Errorf("registration = %v, want a native public client", reg)
	}
	au := st.last("authorized")
	if au.Issuer != srv.Issuer() || au.ClientKind != oauth.KindRegistered || !au.Refresh {
		t.Errorf("authorized step = %+v", au)
	}
	// The store: one record, owner-only, in an owner-only directory.
	fi, err := os.Stat(store.Dir)
	if err != nil || safefile.CheckPrivate(store.Dir) != nil {
		t.Errorf("store dir mode = %v (%v, %v), want its owner's only (0700 on Unix)", fi.Mode().Perm(), err, safefile.CheckPrivate(store.Dir))
	}
	files, _ := filepath.Glob(filepath.Join(store.Dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("store files = %v, want one", files)
	}
	if err := safefile.CheckPrivate(files[0]); err != nil {
		t.Errorf("token file: %v, want its owner's only (0600 on Unix)", err)
	}
	// A second session reads the stored token: no new sign-in.
	var st2 steps
	s2 := session(t, srv, store, &st2, nil)
	if got, _, _ := call(t, srv, s2); got != http.StatusOK {
		t.Errorf("a new session with the stored token got %d, want 200", got)
	}
	if len(srv.Authorize()) != 1 {
		t.Errorf("authorization requests = %d, want 1", len(srv.Authorize()))
	}
}

func TestRefreshAfterExpiry(t *testing.T) {
	srv := oauthtest.Start(t, oauthtest.Options{TokenLife: 2 * time.Second})
	store := &oauth.Store{Dir: t.TempDir()}
	var st steps
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := session(t, srv, store, &st, func(c *oauth.Config) { c.Now = clock })
	if got := signIn(t, srv, s); got != http.StatusOK {
		t.Fatalf("sign-in: %d\n%s", got, srv.Log())
	}
	first := s.Header(context.Background())
	// Past the expiry: Header refreshes before the request is sent.
	mu.Lock()
	now = now.Add(time.Hour)
	mu.Unlock()
	if got, _, sent := call(t, srv, s); got != http.StatusOK || sent == first {
		t.Fatalf("after expiry: status %d, same token %v; want 200 with a new token\n%s", got, sent == first, srv.Log())
	}
	if srv.Grants("refresh_token") != 1 || !strings.Contains(st.events(), "token_refreshed") {
		t.Errorf("refresh grants = %d, steps %q; want one refresh", srv.Grants("refresh_token"), st.events())
	}
	if r := srv.Tokens()[len(srv.Tokens())-1]; r.Get("resource") != srv.MCPURL() {
		t.Errorf("refresh request resource = %q, want %q", r.Get("resource"), srv.MCPURL())
	}
	if !st.last("token_refreshed").Rotated {
		t.Errorf("token_refreshed.Rotated = false, want true: the fixture rotates refresh tokens")
	}
}

func TestRevokedRefreshTokenAsksForLogin(t *testing.T) {
	srv := oauthtest.Start(t, oauthtest.Options{})
	store := &oauth.Store{Dir: t.TempDir()}
	var st steps
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := session(t, srv, store, &st, func(c *oauth.Config) { c.Now = clock })
	if got := signIn(t, srv, s); got != http.StatusOK {
		t.Fatalf("sign-in: %d\n%s", got, srv.Log())
	}
	srv.RevokeRefresh()
	mu.Lock()
	now = now.Add(2 * time.Hour)
	mu.Unlock()
	if h := s.Header(context.Background()); h != "" {
		t.Errorf("Header after a refused refresh = %q, want none: the dead token is forgotten", h)
	}
	f := st.last("auth_failed")
	if f.Stage != oauth.StageRefresh || f.Error != "invalid_grant" || !strings.Contains(f.Message, "mcpshim auth login --url "+srv.MCPURL()) {
		t.Errorf("auth_failed = %+v, want stage refresh, invalid_grant and the command to run", f)
	}
	// A failed refresh leaves the store as it was: another process may
	// have saved a newer refresh token meanwhile.
	rec, _ := store.Load(srv.MCPURL(), oauth.ClientKey("", ""))
	if rec.Token == nil {
		t.Errorf("a refused refresh erased the store's token")
	}
}

// TestTwoSessionsOneRefresh: two shims of one server hold the same expired
// token; one refresh happens, the other takes its result. With rotation, a
// second refresh would reuse a spent refresh token and the fixture would
// revoke the family.
func TestTwoSessionsOneRefresh(t *testing.T) {
	srv := oauthtest.Start(t, oauthtest.Options{})
	store := &oauth.Store{Dir: t.TempDir()}
	var st steps
	later := func() time.Time { return time.Now().Add(2 * time.Hour) }
	s := session(t, srv, store, &st, nil)
	if got := signIn(t, srv, s); got != http.StatusOK {
		t.Fatalf("sign-in: %d\n%s", got, srv.Log())
	}
	const n = 6
	var wg sync.WaitGroup
	got := make([]string, n)
	for i := range n {
		si := session(t, srv, store, &st, func(c *oauth.Config) { c.Now = later })
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = si.Header(context.Background())
		}()
	}
	wg.Wait()
	if g := srv.Grants("refresh_token"); g != 1 {
		t.Errorf("refresh grants = %d, want 1\n%s", g, srv.Log())
	}
	for i := range got {
		if got[i] == "" || got[i] != got[0] {
			t.Errorf("session %d header %q, want the one refreshed token %q", i, got[i], got[0])
		}
	}
}

func TestStepUpUnionAndLimit(t *testing.T) {
	srv := oauthtest.Start(t, oauthtest.Options{Scopes: []string{"mcp:read"}, ScopeInChallenge: true})
	store := &oauth.Store{Dir: t.TempDir()}
	var st steps
	s := session(t, srv, store, &st, nil)
	if got := signIn(t, srv, s); got != http.StatusOK {
		t.Fatalf("sign-in: %d\n%s", got, srv.Log())
	}
	// The server now wants more: 403 insufficient_scope naming mcp:write.
	srv2 := srv
	setScopes(srv2, []string{"mcp:write"})
	if got := signIn(t, srv, s); got != http.StatusOK {
		t.Fatalf("step-up: %d\nsteps %s\n%s", got, st.events(), srv.Log())
	}
	if a := srv.Authorize()[len(srv.Authorize())-1]; a.Get("scope") != "mcp:read mcp:write" {
		t.Errorf("step-up scope = %q, want the union %q", a.Get("scope"), "mcp:read mcp:write")
	}
	// A scope the account never gets: asked once, then refused without a loop.
	setScopes(srv, []string{"mcp:admin"})
	srv.DenyScope("mcp:admin")
	before := len(srv.Authorize())
	if got := signIn(t, srv, s); got != http.StatusForbidden {
		t.Fatalf("status = %d, want 403 in the end", got)
	}
	if n := len(srv.Authorize()) - before; n != 1 {
		t.Errorf("authorization requests for a scope never granted = %d, want 1", n)
	}
	if f := st.last("auth_failed"); f.Stage != oauth.StageScope || f.Error != "insufficient_scope" {
		t.Errorf("auth_failed = %+v, want stage scope", f)
	}
}

func setScopes(srv *oauthtest.Servers, scopes []string) { srv.SetScopes(scopes) }

func TestClientCredentials(t *testing.T) {
	srv := oauthtest.Start(t, oauthtest.Options{PreRegistered: map[string]string{"machine": "s3cret"}, NoRegistration: true})
	var st steps
	s := session(t, srv, nil, &st, func(c *oauth.Config) {
		c.Grant, c.ClientID, c.ClientSecret = oauth.GrantClientCredentials, "machine", "s3cret"
		c.Open = func(context.Context, string) error { return errors.New("no browser for a machine client") }
	})
	if got := signIn(t, srv, s); got != http.StatusOK {
		t.Fatalf("client_credentials: %d\n%s", got, srv.Log())
	}
	if srv.Grants("client_credentials") != 1 || len(srv.Authorize()) != 0 {
		t.Errorf("grants = %d client_credentials, %d authorization requests; want 1 and 0", srv.Grants("client_credentials"), len(srv.Authorize()))
	}
}

func TestClientCredentialsPrivateKeyJWT(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	path := filepath.Join(t.TempDir(), "client.pem")
	os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
	signer, err := oauth.ReadClientKey(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := oauthtest.Start(t, oauthtest.Options{KeyClients: map[string]*ecdsa.PublicKey{"machine": &key.PublicKey}, NoRegistration: true})
	var st steps
	s := session(t, srv, nil, &st, func(c *oauth.Config) {
		c.Grant, c.ClientID, c.ClientKey = oauth.GrantClientCredentials, "machine", signer
	})
	if got := signIn(t, srv, s); got != http.StatusOK {
		t.Fatalf("client_credentials with private_key_jwt: %d\n%s", got, srv.Log())
	}
	if f := srv.Tokens()[0]; f.Get("client_secret") != "" || f.Get("client_assertion") == "" {
		t.Errorf("token request %v, want an assertion and no secret", f)
	}
}

// TestDPoP: a token bound to the shim's key (RFC 9449): a proof at the token
// endpoint and on every request, the DPoP scheme, both servers' nonces, and
// a refresh with the same key.
func TestDPoP(t *testing.T) {
	srv := oauthtest.Start(t, oauthtest.Options{DPoP: true, DPoPNonce: true})
	store := &oauth.Store{Dir: t.TempDir()}
	var st steps
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := session(t, srv, store, &st, func(c *oauth.Config) { c.Now = clock })
	if got := signIn(t, srv, s); got != http.StatusOK {
		t.Fatalf("DPoP sign-in: %d\nsteps %s\n%s", got, st.events(), srv.Log())
	}
	if h := s.Header(context.Background()); !strings.HasPrefix(h, "DPoP ") {
		t.Errorf("Authorization = %q, want the DPoP scheme", h)
	}
	mu.Lock()
	now = now.Add(2 * time.Hour)
	mu.Unlock()
	if got := signIn(t, srv, s); got != http.StatusOK || srv.Grants("refresh_token") < 1 {
		t.Fatalf("after a refresh: %d, %d refreshes\n%s", got, srv.Grants("refresh_token"), srv.Log())
	}
}

// TestPreRegisteredClientBoundToIssuer: a pre-registered client is not
// presented to another authorization server the resource moves to.
func TestPreRegisteredClientBoundToIssuer(t *testing.T) {
	first := oauthtest.Start(t, oauthtest.Options{PreRegistered: map[string]string{"app": "s3cret-one"}})
	store := &oauth.Store{Dir: t.TempDir()}
	var st steps
	s := session(t, first, store, &st, func(c *oauth.Config) { c.ClientID, c.ClientSecret = "app", "s3cret-one" })
	if got := signIn(t, first, s); got != http.StatusOK {
		t.Fatalf("sign-in: %d\n%s", got, first.Log())
	}
	// The same server URL, its metadata now naming another issuer: a
	// record for that URL says where the client signed in before.
	rec, _ := store.Load(first.MCPURL(), oauth.ClientKey("app", ""))
	rec.Issuer = "https://old-issuer.example"
	rec.Token = nil
	store.Save(rec)
	s2 := session(t, first, store, &st, func(c *oauth.Config) { c.ClientID, c.ClientSecret = "app", "s3cret-one" })
	before := len(first.Authorize())
	if got := signIn(t, first, s2); got != http.StatusUnauthorized {
		t.Errorf("status %d, want 401: the client must not be presented to another issuer", got)
	}
	if f := st.last("auth_failed"); f.Stage != oauth.StageRegistration || !strings.Contains(f.Message, "https://old-issuer.example") || len(first.Authorize()) != before {
		t.Errorf("auth_failed = %+v, %d new authorization requests; want a registration failure naming the old issuer and none", f, len(first.Authorize())-before)
	}
}

// TestJWTBearerGrant: a workload's identity token from a file is the grant
// (RFC 7523 §2.1), read afresh each time a token is needed.
func TestJWTBearerGrant(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	srv := oauthtest.Start(t, oauthtest.Options{WorkloadKey: &key.PublicKey, PreRegistered: map[string]string{"workload": ""}, NoRegistration: true, TokenLife: time.Hour})
	file := filepath.Join(t.TempDir(), "token")
	writeWorkloadJWT(t, file, key, srv.Issuer())
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	var st steps
	s := session(t, srv, nil, &st, func(c *oauth.Config) {
		c.Grant, c.ClientID, c.AssertionFile, c.Now = "jwt-bearer", "workload", file, clock
	})
	if got := signIn(t, srv, s); got != http.StatusOK {
		t.Fatalf("jwt-bearer: %d\n%s", got, srv.Log())
	}
	mu.Lock()
	now = now.Add(2 * time.Hour)
	mu.Unlock()
	if got, _, _ := call(t, srv, s); got != http.StatusOK || srv.Grants(oauth.GrantJWTBearer) != 2 {
		t.Errorf("after expiry: %d, %d jwt-bearer grants; want 200 and the grant asked for again", got, srv.Grants(oauth.GrantJWTBearer))
	}
	// Another audience is refused by the server and the refusal reported.
	writeWorkloadJWT(t, file, key, "https://wrong.example")
	mu.Lock()
	now = now.Add(2 * time.Hour)
	mu.Unlock()
	s.Header(context.Background())
	if f := st.last("auth_failed"); f.Error != "invalid_grant" || !strings.Contains(f.Message, "refused the jwt-bearer grant") {
		t.Errorf("a refused assertion: auth_failed %+v", f)
	}
}

func writeWorkloadJWT(t *testing.T, file string, key *ecdsa.PrivateKey, aud string) {
	b64 := base64.RawURLEncoding.EncodeToString
	h := b64([]byte(`{"alg":"ES256","typ":"JWT"}`))
	c := b64(fmt.Appendf(nil, `{"iss":"https://ci.example","sub":"repo:x","aud":%q,"exp":%d}`, aud, time.Now().Add(time.Hour).Unix()))
	sum := sha256.Sum256([]byte(h + "." + c))
	r, s, _ := ecdsa.Sign(rand.Reader, key, sum[:])
	sig := append(r.FillBytes(make([]byte, 32)), s.FillBytes(make([]byte, 32))...)
	if err := os.WriteFile(file, []byte(h+"."+c+"."+b64(sig)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestIDJAGGrant: the enterprise-managed authorization extension: the ID
// token is exchanged at the identity provider for an ID-JAG, which the
// JWT-bearer grant presents with the client's own authentication.
func TestIDJAGGrant(t *testing.T) {
	idp, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	srv := oauthtest.Start(t, oauthtest.Options{IDPKey: idp, PreRegistered: map[string]string{"app": "app-secret"}, NoRegistration: true})
	file := filepath.Join(t.TempDir(), "id-token")
	os.WriteFile(file, []byte(oauthtest.SignJWT(idp, "JWT", map[string]any{"iss": srv.AS.URL, "sub": "alice", "aud": "idp-client", "exp": time.Now().Add(time.Hour).Unix()})), 0o600)
	var st steps
	s := session(t, srv, nil, &st, func(c *oauth.Config) {
		c.Grant, c.ClientID, c.ClientSecret, c.AssertionFile, c.IDPTokenEndpoint, c.IDPClientID = oauth.GrantIDJAG, "app", "app-secret", file, srv.IDPURL(), "idp-client"
	})
	if got := signIn(t, srv, s); got != http.StatusOK {
		t.Fatalf("id-jag: %d\nsteps %s\n%+v\n%s", got, st.events(), st.last("auth_failed"), srv.Log())
	}
	if srv.Grants(oauth.GrantJWTBearer) != 1 {
		t.Errorf("jwt-bearer grants = %d, want 1", srv.Grants(oauth.GrantJWTBearer))
	}
}

// TestSignInOutlivesItsRequest: a request that stops waiting (the client's
// patience) does not stop the sign-in; the next request finds its token.
func TestSignInOutlivesItsRequest(t *testing.T) {
	srv := oauthtest.Start(t, oauthtest.Options{})
	release := make(chan struct{})
	var st steps
	s := session(t, srv, &oauth.Store{Dir: t.TempDir()}, &st, func(c *oauth.Config) {
		c.Open = func(ctx context.Context, u string) error {
			// The person opens the URL later.
			go func() { <-release; oauthtest.Browser(ctx, u) }()
			return nil
		}
	})
	status, h, sent := call(t, srv, s)
	short, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	err := s.Challenged(short, status, h, sent)
	cancel()
	if err == nil || !strings.Contains(err.Error(), "mcpshim auth login --url "+srv.MCPURL()) {
		t.Fatalf("a request that stopped waiting: %v, want an error saying what to run", err)
	}
	close(release)
	status, h, sent = call(t, srv, s)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if status == http.StatusUnauthorized {
		if err := s.Challenged(ctx, status, h, sent); err != nil {
			t.Fatalf("the next request: %v", err)
		}
	}
	if got, _, _ := call(t, srv, s); got != http.StatusOK || len(srv.Authorize()) != 1 {
		t.Errorf("after the person signed in: %d, %d authorization requests; want 200 and one sign-in\n%s", got, len(srv.Authorize()), srv.Log())
	}
}
