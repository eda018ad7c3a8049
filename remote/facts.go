package remote

import (
	"crypto/tls"
	"net"

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
