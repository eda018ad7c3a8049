package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
)

// authContext is what an auth scenario hands its client in
// MCP_CONFORMANCE_CONTEXT: a pre-registered client, its key, or the tokens
// a workload or an enterprise identity provider would hold.
type authContext struct {
	ClientID         string `json:"client_id"`
	ClientSecret     string `json:"client_secret"`
	PrivateKeyPEM    string `json:"private_key_pem"`
	ValidJWT         string `json:"valid_jwt"`
	IDPIDToken       string `json:"idp_id_token"`
	IDPTokenEndpoint string `json:"idp_token_endpoint"`
	IDPClientID      string `json:"idp_client_id"`
}

// secretVar is the variable the client secret travels in: the entry's env,
// read by the shim through --oauth-client-secret '${VAR}', as a person
// would configure it (never a literal in argv).
const secretVar = "MCPSHIM_CONFORMANCE_CLIENT_SECRET"

// cimdURL is the client ID metadata document the suite's authorization
// server serves for auth/basic-cimd.
const cimdURL = "https://conformance-test.local/client-metadata.json"

// signInFlags are the shim's --oauth-* flags for scenario given its
// context, and the environment they need; key material is written to
// files in dir. No context and no known scenario: no flags (the shim
// registers itself dynamically).
func signInFlags(scenario, raw, dir string) (flags, env []string, err error) {
	var c authContext
	if raw != "" {
		if err := json.Unmarshal([]byte(raw), &c); err != nil {
			return nil, nil, err
		}
	}
	file := func(name, content string) (string, error) {
		p := filepath.Join(dir, name)
		return p, os.WriteFile(p, []byte(content), 0o600)
	}
	if c.ClientID != "" {
		flags = append(flags, "--oauth-client-id", c.ClientID)
	}
	if c.ClientSecret != "" {
		flags = append(flags, "--oauth-client-secret", "${"+secretVar+"}")
		env = append(env, secretVar+"="+c.ClientSecret)
	}
	if c.PrivateKeyPEM != "" {
		p, err := file("client-key.pem", c.PrivateKeyPEM)
		if err != nil {
			return nil, nil, err
		}
		flags = append(flags, "--oauth-client-key", p)
	}
	switch {
	case strings.HasPrefix(scenario, "auth/client-credentials-"):
		flags = append(flags, "--oauth-grant", "client_credentials")
	case c.ValidJWT != "":
		p, err := file("workload.jwt", c.ValidJWT)
		if err != nil {
			return nil, nil, err
		}
		flags = append(flags, "--oauth-grant", "jwt-bearer", "--oauth-assertion-file", p)
	case c.IDPIDToken != "":
		p, err := file("id-token.jwt", c.IDPIDToken)
		if err != nil {
			return nil, nil, err
		}
		flags = append(flags, "--oauth-grant", "id-jag", "--oauth-assertion-file", p,
			"--oauth-idp-token-endpoint", c.IDPTokenEndpoint, "--oauth-idp-client-id", c.IDPClientID)
	case scenario == "auth/basic-cimd":
		flags = append(flags, "--oauth-client-metadata-url", cimdURL)
	}
	return flags, env, nil
}
