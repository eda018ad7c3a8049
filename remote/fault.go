package remote

// Faults that time does not mend: a certificate this machine does not
// trust, a character no HTTP header may carry (in a --header value, a
// token, or a header the server sent). They are no outage: retrying gives
// the same answer, and a reconnect loop would hide the cause behind
// "unreachable". The request fails at once, saying what is wrong.

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/textproto"
	"strings"
	"time"
)

// trustHint is how to trust a private or self-signed CA: Go reads the
// roots from SSL_CERT_FILE (one PEM file) or SSL_CERT_DIR on Linux and BSD.
const trustHint = "to trust its CA, set SSL_CERT_FILE in the entry's env to a PEM file holding it (with the system's roots, which it replaces) or SSL_CERT_DIR to a directory of them"

// fault says what is wrong when err is a fault time does not mend, and
// whether the request may have reached the server; "" when err is another.
func fault(err error) (why string, sent bool) {
	if err == nil {
		return "", false
	}
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	var record tls.RecordHeaderError
	var proto textproto.ProtocolError
	switch {
	case errors.As(err, &unknown):
		issuer := "its issuer"
		if unknown.Cert != nil {
			issuer = fmt.Sprintf("%q", unknown.Cert.Issuer.String())
			if unknown.Cert.Issuer.String() == unknown.Cert.Subject.String() {
				issuer += " (self-signed)"
			}
		}
		return fmt.Sprintf("the server's TLS certificate is signed by %s, which this machine does not trust (x509: certificate signed by unknown authority): %s", issuer, trustHint), false
	case errors.As(err, &host):
		names := "no name"
		if host.Certificate != nil && len(host.Certificate.DNSNames) > 0 {
			names = strings.Join(host.Certificate.DNSNames, ", ")
		}
		return fmt.Sprintf("the server's TLS certificate is for %s, not %s: use a --url with a name the certificate holds", names, host.Host), false
	case errors.As(err, &invalid):
		what := invalid.Error()
		if invalid.Reason == x509.Expired && invalid.Cert != nil {
			what = fmt.Sprintf("it expired at %s", invalid.Cert.NotAfter.UTC().Format(time.RFC3339))
		}
		return fmt.Sprintf("the server's TLS certificate is not valid (%s); if a private CA issued it, %s", what, trustHint), false
	case errors.As(err, &verify):
		return fmt.Sprintf("the server's TLS certificate does not verify (%v): %s", verify.Err, trustHint), false
	case errors.As(err, &record):
		return "the server does not speak TLS on this port (a plain HTTP answer to the TLS handshake): is the --url http://?", false
	case errors.As(err, &proto) && strings.HasPrefix(string(proto), "malformed MIME header"):
		return fmt.Sprintf("the server's answer has a header no HTTP message may carry (%s: a control character or no colon)", headerOf(string(proto))), true
	}
	msg := err.Error()
	if _, name, ok := strings.Cut(msg, "invalid header field value for "); ok {
		return fmt.Sprintf("the request's %s header holds a control character, which no HTTP header may carry (from --header, the token or the session id; its value is not shown)", strings.Trim(name, `"`)), false
	}
	return "", false
}

// headerOf is the name in a textproto error's quoted header line: the value
// may be a session id or a credential, and is never shown.
func headerOf(protoErr string) string {
	_, line, _ := strings.Cut(protoErr, ": ")
	name, _, ok := strings.Cut(strings.Trim(line, `"`), ":")
	if !ok || name == "" || strings.ContainsAny(name, `\ `) {
		return "a malformed line"
	}
	return name
}

// faultClass is a fault's error_class in the ledger.
func faultClass(err error) string {
	var verify *tls.CertificateVerificationError
	var record tls.RecordHeaderError
	if errors.As(err, &verify) || errors.As(err, &record) || errors.As(err, new(x509.UnknownAuthorityError)) ||
		errors.As(err, new(x509.HostnameError)) || errors.As(err, new(x509.CertificateInvalidError)) {
		return "tls"
	}
	return "header"
}

// errText is an error as the ledger keeps it: a fault's sentence instead of
// Go's, which quotes a malformed header line whole (a session id, a token).
func errText(err error) string {
	if why, _ := fault(err); why != "" {
		return why
	}
	return err.Error()
}
