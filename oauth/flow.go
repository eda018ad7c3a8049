package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"
)

// target is where a sign-in goes: the authorization server and the
// resource indicator.
type target struct {
	as       *ServerMetadata
	prm      *ResourceMetadata // nil for a 2025-03-26 server
	resource string
	dpopKey  []byte // the key to bind the token to (DPoP), nil for Bearer
}

// discover finds the authorization server for the challenge: the protected
// resource metadata's first authorization server whose metadata is valid,
// or, for a server that publishes no resource metadata (2025-03-26), its own
// origin's metadata and then the default endpoints.
func (s *Session) discover(ctx context.Context, ch Challenge) (*target, error) {
	prm, err := s.resourceMetadata(ctx, ch.Param("resource_metadata"))
	if errors.Is(err, errNoResourceMetadata) {
		as, err := s.serverMetadata(ctx, origin(s.cfg.Server))
		if errors.Is(err, errNoServerMetadata) {
			return &target{as: fallbackMetadata(s.cfg.Server), resource: canonicalResource(s.cfg.Server)}, nil
		}
		if err != nil {
			return nil, &FlowError{Stage: StageServerMetadata, Err: err}
		}
		return &target{as: as, resource: canonicalResource(s.cfg.Server)}, nil
	}
	if err != nil {
		return nil, &FlowError{Stage: StageResourceMetadata, Err: err}
	}
	var first error
	for _, issuer := range prm.AuthorizationServers {
		as, err := s.serverMetadata(ctx, issuer)
		if err == nil {
			// The resource indicator is the metadata's resource byte for
			// byte: a slash added to a pathless URL names another resource
			// to a server that compares strings.
			return &target{as: as, prm: prm, resource: prm.Resource}, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, &FlowError{Stage: StageServerMetadata, Err: first}
}

// authorize signs in: discovery, the client's identity, then the grant. It
// holds the store's lock throughout, so that two shims of the same server
// open one browser: the second finds the first one's token and takes it.
func (s *Session) authorize(ctx context.Context, status int, ch Challenge, stepUp bool) error {
	before := s.record()
	unlock, err := s.lock(ctx)
	if err != nil {
		return &FlowError{Stage: StageStore, Err: err}
	}
	defer unlock()
	rec := s.record()
	if s.cfg.Store != nil {
		if kept, st, err := s.load(); err == nil {
			if !stepUp && kept.Token != nil && (before.Token == nil || kept.Token.AccessToken != before.Token.AccessToken) && !kept.Token.expired(s.now()) && !s.isDead(kept.Token) {
				s.adopt(kept, st)
				return nil
			}
			rec = kept // the store is the truth: its clients and scopes are what the sign-in adds to
		}
	}
	tg, err := s.discover(ctx, ch)
	if err != nil {
		return err
	}
	if dpopUsable(tg.as) {
		if tg.dpopKey, err = newDPoPKey(); err != nil {
			return &FlowError{Stage: StageToken, Err: err}
		}
	}
	// 2026-07-28, Authorization Server Binding: "If the authorization server
	// indicated by protected resource metadata no longer matches the one the
	// credentials were registered with, clients SHOULD surface an error
	// rather than silently attempting to use mismatched credentials."
	if s.cfg.ClientID != "" && rec.Issuer != "" && rec.Issuer != tg.as.Issuer {
		return &FlowError{Stage: StageRegistration, Err: fmt.Errorf("the server now names the authorization server %s, not %s where client %s signed in before: if the move is right, register a client there (or run mcpshim auth logout %s to forget the old one)", tg.as.Issuer, rec.Issuer, s.cfg.ClientID, s.shown())}
	}
	scopes := chooseScopes(ch.Param("scope"), tg.prm, tg.as, rec.Scopes)
	kept := rec.Clients[tg.as.Issuer]
	var c *Client
	var t *Token
	if machine(s.cfg.Grant) {
		c = s.preRegistered(tg.as.Issuer, "")
		s.notify(Step{Event: StepStarted, Status: status, Issuer: tg.as.Issuer, Resource: tg.resource, Scope: strings.Join(scopes, " "), ClientKind: c.Kind, ClientID: c.ID})
		form, err := s.machineGrant(ctx, tg, scopes)
		if err != nil {
			return &FlowError{Stage: StageToken, Err: err}
		}
		if t, err = s.tokenRequest(ctx, tg, c, form); err != nil {
			return &FlowError{Stage: StageToken, Err: err}
		}
	} else {
		if err := checkPKCE(tg.as); err != nil {
			return &FlowError{Stage: StageServerMetadata, Err: err}
		}
		want := s.cfg.RedirectURI
		if want == "" && kept != nil {
			want = kept.RedirectURI
		}
		if want == "" && s.cfg.ClientMetadataURL != "" && tg.as.ClientIDMetadataDocumentSupported {
			want, _ = s.metadataDocumentRedirect(ctx)
		}
		ln, redirect, err := redirectListener(want)
		if err != nil {
			return &FlowError{Stage: StageAuthorization, Err: err}
		}
		defer ln.Close()
		if c, err = s.client(ctx, tg.as, redirect, kept); err != nil {
			return &FlowError{Stage: StageRegistration, Err: err}
		}
		if c.Kind == KindRegistered && c != kept {
			// Kept at once: a sign-in that fails after it reuses the
			// registration (each failed sign-in registered another client).
			next := *rec
			next.Clients = map[string]*Client{tg.as.Issuer: c}
			for k, v := range rec.Clients {
				if k != tg.as.Issuer {
					next.Clients[k] = v
				}
			}
			if err := s.save(&next); err != nil {
				return &FlowError{Stage: StageStore, Err: err}
			}
			rec = s.record()
		}
		s.notify(Step{Event: StepStarted, Status: status, Issuer: tg.as.Issuer, Resource: tg.resource, Scope: strings.Join(scopes, " "), ClientKind: c.Kind, ClientID: c.ID})
		if t, err = s.authorizeCode(ctx, tg, c, ln, scopes); err != nil {
			return err
		}
	}
	next := *rec
	next.Issuer, next.Resource, next.Grant, next.Token = tg.as.Issuer, tg.resource, s.cfg.Grant, t
	next.AS = tg.as
	next.Scopes = union(rec.Scopes, scopes)
	next.Clients = map[string]*Client{}
	for k, v := range rec.Clients {
		next.Clients[k] = v
	}
	kc := *c
	if kc.Kind == KindPreRegistered {
		kc.Secret = "" // the flag gives it each time; it is not the store's to keep
	}
	next.Clients[tg.as.Issuer] = &kc
	next.Updated = s.now()
	if err := s.save(&next); err != nil {
		return &FlowError{Stage: StageStore, Err: err}
	}
	s.notify(Step{Event: StepAuthorized, Status: status, Issuer: tg.as.Issuer, Resource: tg.resource, Scope: t.Scope,
		ClientKind: c.Kind, ClientID: c.ID, ExpiresIn: expiresIn(t, s.now()), Refresh: t.RefreshToken != ""})
	return nil
}

// refresh replaces an expired or refused token: a refresh_token grant, or a
// new client_credentials grant. The store is the truth: under its lock the
// refresh reads it first and uses what it holds, since another shim (or
// mcpshim auth login) may have refreshed meanwhile and a rotated refresh
// token works once (a replayed one revokes its family, OAuth 2.1 §4.3.1),
// or signed out. A refresh that fails leaves the store as it was.
func (s *Session) refresh(ctx context.Context, status int) error {
	before := s.record()
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if s.cfg.Store != nil {
		kept, st, err := s.load()
		if err != nil {
			return s.failed(status, &FlowError{Stage: StageStore, Err: err})
		}
		s.adopt(kept, st)
	}
	rec := s.record()
	if s.isSignedOut() {
		return s.signedOutError()
	}
	if rec.Token != nil && before.Token != nil && rec.Token.AccessToken != before.Token.AccessToken && !rec.Token.expired(s.now()) {
		return nil // refreshed meanwhile, by another process or another request of this one
	}
	if rec.Token == nil || rec.AS == nil {
		return errors.New("nothing to refresh")
	}
	c := rec.Clients[rec.Issuer]
	if c == nil {
		return errors.New("no client identity kept for " + rec.Issuer)
	}
	cc := *c
	if cc.Kind == KindPreRegistered {
		cc.Secret, cc.key = s.cfg.ClientSecret, s.cfg.ClientKey
	}
	tg := &target{as: rec.AS, resource: rec.Resource, dpopKey: rec.Token.DPoPKey}
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rec.Token.RefreshToken}}
	if machine(rec.Grant) {
		var err error
		if form, err = s.machineGrant(ctx, tg, rec.Scopes); err != nil {
			return s.failed(status, &FlowError{Stage: StageRefresh, Err: err})
		}
	}
	t, err := s.tokenRequest(ctx, tg, &cc, form)
	if err != nil {
		var te *TokenError
		fe := &FlowError{Stage: StageRefresh, Err: fmt.Errorf("refreshing the token at %s: %w", rec.AS.TokenEndpoint, err)}
		if errors.As(err, &te) {
			fe.Code, fe.Description = te.Code, te.Description
			if te.Code == "invalid_grant" && machine(rec.Grant) {
				fe.Err = fmt.Errorf("the authorization server %s refused the %s grant (invalid_grant): check the client's credentials or the workload's token", rec.Issuer, grantName(rec.Grant))
			} else if te.Code == "invalid_grant" {
				// Revoked or expired: this process stops using it and signs
				// in at the next 401. The store keeps it: the refresh token
				// another process saves meanwhile must not be lost.
				next := *rec
				next.Token = nil
				s.setRecord(&next)
				s.mu.Lock()
				s.dead = rec.Token.RefreshToken
				s.mu.Unlock()
				fe.Err = fmt.Errorf("the authorization server %s refused the stored refresh token (revoked or expired): sign in again with mcpshim auth login --url %s", rec.Issuer, s.shown())
			}
		}
		return s.failed(status, fe)
	}
	if t.RefreshToken == "" {
		t.RefreshToken = rec.Token.RefreshToken // RFC 6749 §6: the old one stays valid
	}
	if t.Scope == "" {
		t.Scope = rec.Token.Scope
	}
	next := *rec
	next.Token = t
	next.Updated = s.now()
	if err := s.save(&next); err != nil {
		return s.failed(status, &FlowError{Stage: StageStore, Err: err})
	}
	s.mu.Lock()
	s.refreshed = t.AccessToken
	s.mu.Unlock()
	s.notify(Step{Event: StepRefreshed, Status: status, Issuer: rec.Issuer, Resource: rec.Resource, Scope: t.Scope,
		ExpiresIn: expiresIn(t, s.now()), Rotated: t.RefreshToken != rec.Token.RefreshToken})
	return nil
}

// grantName is a grant as --oauth-grant spells it.
func grantName(g string) string {
	switch g {
	case GrantJWTBearer:
		return "jwt-bearer"
	case GrantIDJAG:
		return "id-jag"
	}
	return g
}

// machine tells whether a grant gets its token with no person: asked for
// again instead of refreshed.
func machine(grant string) bool {
	return grant == GrantClientCredentials || grant == GrantJWTBearer || grant == GrantIDJAG
}

// machineGrant is the token request of a machine grant: client_credentials,
// or the JWT-bearer grant (RFC 7523 §2.1) with the workload's token read
// afresh from its file (workload identity tokens rotate).
func (s *Session) machineGrant(ctx context.Context, tg *target, scopes []string) (url.Values, error) {
	form := url.Values{"grant_type": {s.cfg.Grant}}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	if s.cfg.Grant == GrantJWTBearer || s.cfg.Grant == GrantIDJAG {
		b, err := os.ReadFile(s.cfg.AssertionFile)
		if err != nil {
			return nil, fmt.Errorf("--oauth-assertion-file: %w", err)
		}
		form.Set("grant_type", GrantJWTBearer)
		form.Set("assertion", strings.TrimSpace(string(b)))
	}
	if s.cfg.Grant == GrantIDJAG {
		jag, err := s.exchangeIDToken(ctx, tg, form.Get("assertion"), scopes)
		if err != nil {
			return nil, err
		}
		form.Set("assertion", jag)
	}
	return form, nil
}

// exchangeIDToken asks the identity provider for an ID-JAG for this server
// (RFC 8693 token exchange, SEP-990): the ID token as the subject, the
// server's authorization server as the audience, the resource.
func (s *Session) exchangeIDToken(ctx context.Context, tg *target, idToken string, scopes []string) (string, error) {
	idp := &target{as: &ServerMetadata{Issuer: s.cfg.IDPTokenEndpoint, TokenEndpoint: s.cfg.IDPTokenEndpoint}, resource: tg.resource}
	form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"},
		"subject_token": {idToken}, "subject_token_type": {"urn:ietf:params:oauth:token-type:id_token"},
		"requested_token_type": {"urn:ietf:params:oauth:token-type:id-jag"}, "audience": {tg.as.Issuer}}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	// RFC 8693 answers with an access_token whose token_type is N_A.
	t, err := s.tokenRequest(ctx, idp, &Client{ID: s.cfg.IDPClientID, AuthMethod: AuthNone}, form)
	if err != nil {
		return "", fmt.Errorf("exchanging the ID token at the identity provider: %w", err)
	}
	return t.AccessToken, nil
}

func expiresIn(t *Token, now time.Time) time.Duration {
	if t.Expiry.IsZero() {
		return 0
	}
	return t.Expiry.Sub(now).Round(time.Second)
}

func (s *Session) setRecord(r *Record) {
	s.hideRecord(r)
	s.mu.Lock()
	s.rec = r
	s.mu.Unlock()
}

// save keeps r in memory and in the store, under the store's lock. A token
// obtained later than r's, saved meanwhile by a process that did not take
// the lock, stays and is taken instead: a newer refresh token is never
// overwritten with an older one.
func (s *Session) save(r *Record) error {
	if s.cfg.Store == nil {
		s.setRecord(r)
		return nil
	}
	if cur, st, err := s.load(); err == nil && cur.Token != nil && r.Token != nil && cur.Token.Obtained.After(r.Token.Obtained) {
		s.adopt(cur, st)
		return nil
	}
	s.setRecord(r)
	if err := s.cfg.Store.Save(r); err != nil {
		return err
	}
	st := s.cfg.Store.stamp(s.key, s.clientKey)
	s.mu.Lock()
	s.kept, s.signedOut = st, false
	s.mu.Unlock()
	return nil
}

// load reads the store's record and the stamp it was read at.
func (s *Session) load() (*Record, stamp, error) {
	st := s.cfg.Store.stamp(s.key, s.clientKey)
	r, err := s.cfg.Store.Load(s.key, s.clientKey)
	return r, st, err
}

// follow takes the store's record when another process changed it since
// this Session read or wrote it (a refresh, a sign-in, a logout): a stat
// per request tells.
func (s *Session) follow() {
	if s.cfg.Store == nil {
		return
	}
	st := s.cfg.Store.stamp(s.key, s.clientKey)
	s.mu.Lock()
	same := st == s.kept
	s.mu.Unlock()
	if same {
		return
	}
	if r, st, err := s.load(); err == nil {
		s.mu.Lock()
		if r.Token != nil && (s.rec.Token == nil || r.Token.AccessToken != s.rec.Token.AccessToken) {
			s.untaken = 0 // another process signed in: its token deserves a try
		}
		s.mu.Unlock()
		s.adopt(r, st) // a damaged file: what memory holds stays
	}
}

// adopt makes the store's record this Session's. A record that lost the
// token this Session held was signed out (mcpshim auth logout): the
// tokens are no longer used, and it says so once.
func (s *Session) adopt(r *Record, st stamp) {
	s.hideRecord(r)
	dead := s.isDead(r.Token)
	s.mu.Lock()
	lost := r.Token == nil && s.rec.Token != nil && !s.signedOut
	if r.Token != nil {
		s.signedOut = false
	}
	if lost {
		s.signedOut = true
	}
	s.rec, s.kept = r, st
	if dead {
		mem := *r
		mem.Token = nil
		s.rec = &mem
	}
	s.mu.Unlock()
	if lost {
		s.failed(0, s.signedOutError())
	}
}

// isDead tells whether t's refresh token is the one the server refused.
func (s *Session) isDead(t *Token) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return t != nil && t.RefreshToken != "" && t.RefreshToken == s.dead
}

func (s *Session) isSignedOut() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.signedOut
}

// signedOutError is what requests get after a logout: this shim signs in
// again only when asked to (mcpshim auth login), whose token it then takes.
func (s *Session) signedOutError() error {
	return &FlowError{Stage: StageStore, Err: fmt.Errorf("the sign-in to %s was removed from the token store (mcpshim auth logout): this shim no longer uses its tokens; sign in again with mcpshim auth login --url %s", s.shown(), s.shown())}
}

// lock takes the store's lock for this server and client; without a store
// only this process shares the token, and a lock of its own serializes it.
func (s *Session) lock(ctx context.Context) (func(), error) {
	if s.cfg.Store != nil {
		return s.cfg.Store.lock(ctx, s.key, s.clientKey, func(holder string) {
			s.mu.Lock()
			prompt := s.cfg.Prompt
			s.mu.Unlock()
			if prompt != nil {
				fmt.Fprintf(prompt, "mcpshim: waiting for %s\n", holder)
			}
		})
	}
	select {
	case s.local <- struct{}{}:
		return func() { <-s.local }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
