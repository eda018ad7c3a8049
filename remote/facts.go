package remote

import (
	"crypto/tls"
	"net"
	"regexp"
	"strings"

	"github.com/mcpshim-dev/mcpshim/ledger"
)

func tlsClient(conn net.Conn, host string) *tls.Conn {
	return tls.Client(conn, &tls.Config{ServerName: host, NextProtos: []string{"h2", "http/1.1"}})
}

// tlsFacts are the TLS facts of connected: what was negotiated and who the
// certificate names.
func tlsFacts(st tls.ConnectionState) []ledger.Field {
	fields := []ledger.Field{ledger.F("tls", true), ledger.F("tls_version", tls.VersionName(st.Version)),
		ledger.F("cipher_suite", tls.CipherSuiteName(st.CipherSuite)), ledger.F("alpn", st.NegotiatedProtocol)}
	if len(st.PeerCertificates) > 0 {
		c := st.PeerCertificates[0]
		fields = append(fields, ledger.F("cert_subject", c.Subject.CommonName), ledger.F("cert_dns_names", c.DNSNames),
			ledger.F("cert_issuer", c.Issuer.CommonName), ledger.F("cert_not_after", c.NotAfter.UTC().Format("2006-01-02T15:04:05Z")))
	}
	return fields
}

var challengeParam = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_-]*)\s*=\s*("((?:[^"\\]|\\.)*)"|[^\s,]+)`)

// parseChallenge reads the first challenge of a WWW-Authenticate header
// (RFC 9110 §11.6.1): its scheme and parameters, such as realm and the
// resource_metadata of RFC 9728 that an OAuth client would follow.
func parseChallenge(h string) map[string]string {
	out := map[string]string{}
	h = strings.TrimSpace(h)
	if h == "" {
		return out
	}
	scheme, rest, _ := strings.Cut(h, " ")
	out["scheme"] = scheme
	for _, m := range challengeParam.FindAllStringSubmatch(rest, -1) {
		k := strings.ToLower(m[1])
		if _, seen := out[k]; seen {
			continue
		}
		v := m[2]
		if strings.HasPrefix(v, `"`) {
			v = strings.ReplaceAll(m[3], `\"`, `"`)
		}
		out[k] = v
	}
	return out
}
