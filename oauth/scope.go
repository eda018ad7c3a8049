package oauth

import (
	"slices"
	"strings"
)

// chooseScopes is the scope to request (2025-11-25 and 2026-07-28, Scope
// Selection Strategy): "Use scope parameter from the initial WWW-Authenticate
// header in the 401 response, if provided"; "If scope is not available, use
// all scopes defined in scopes_supported from the Protected Resource Metadata
// document, omitting the scope parameter if scopes_supported is undefined."
//
// Step-up keeps what was asked before (2026-07-28: "computing the union of
// the client's previously requested scope set and the scopes from the
// current challenge"). offline_access is added when the authorization
// server lists it, and only then: a client "MAY add offline_access to the
// scope parameter ... when the Authorization Server metadata contains it in
// scopes_supported".
func chooseScopes(challenge string, prm *ResourceMetadata, as *ServerMetadata, previous []string) []string {
	var scopes []string
	switch {
	case strings.TrimSpace(challenge) != "":
		scopes = strings.Fields(challenge)
	case prm != nil && len(prm.ScopesSupported) > 0:
		scopes = slices.Clone(prm.ScopesSupported)
	}
	scopes = union(previous, scopes)
	if len(scopes) > 0 && as != nil && slices.Contains(as.ScopesSupported, "offline_access") {
		scopes = union(scopes, []string{"offline_access"})
	}
	return scopes
}

// union is a then the members of b not in a, in order, without repeats.
func union(a, b []string) []string {
	var out []string
	for _, s := range append(slices.Clone(a), b...) {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
