package otelexport

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// OTLP over HTTP with protobuf bodies (wire.go), on net/http: no
// OpenTelemetry SDK and no gRPC, which added 7 MB and 180 packages to every
// shim's binary and start-up, OTLP or not. "The request body is a
// Protobuf-encoded ExportTraceServiceRequest message" (OTLP specification,
// OTLP/HTTP Request), POSTed to /v1/traces as application/x-protobuf.

// ProtocolHTTP is the OTLP protocol, as OTEL_EXPORTER_OTLP_PROTOCOL spells it.
const ProtocolHTTP = "http/protobuf"

var (
	// ErrProtocol is an OTLP protocol other than http/protobuf.
	ErrProtocol = errors.New("unsupported OTLP protocol: mcpshim speaks http/protobuf (a collector's OTLP/HTTP receiver, port 4318); grpc is not built in")
	// ErrEndpoint is an endpoint that is not an http or https URL.
	ErrEndpoint = errors.New("OTLP endpoint must be an http:// or https:// URL")
)

// Config says where spans go. What it leaves empty is read from the standard
// variables, per signal first (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, then
// OTEL_EXPORTER_OTLP_ENDPOINT; likewise _HEADERS, _TIMEOUT, _COMPRESSION,
// _CERTIFICATE, _CLIENT_CERTIFICATE, _CLIENT_KEY).
type Config struct {
	// Endpoint is the collector's base URL, read as OTEL_EXPORTER_OTLP_ENDPOINT
	// is: /v1/traces (or /v1/metrics) is appended to its path. http:// means no TLS.
	Endpoint string
	// Protocol is ProtocolHTTP or empty.
	Protocol string
	// Timeout bounds one export; 0 reads _TIMEOUT, else 10s.
	Timeout time.Duration
	// NoRetry fails an export at once instead of retrying with backoff: the
	// live exporter would rather drop than hold its queue.
	NoRetry bool
	// Getenv reads the variables; nil is os.Getenv.
	Getenv func(string) string
	// Full exports what --capture full records beyond what a reader needs:
	// the launch's every variable name, PATH and cwd.
	Full bool
	// Version is the shim's version, service.version of the resource; it is
	// asked for only when export is on.
	Version func() string
}

func (cfg Config) version() string {
	if cfg.Version == nil {
		return ""
	}
	return cfg.Version()
}

// Exporter posts OTLP requests for one signal to a collector.
type Exporter struct {
	url     string
	headers http.Header
	gzip    bool
	timeout time.Duration
	retry   bool
	client  *http.Client
}

// NewExporter returns the span exporter cfg describes. It does not connect:
// a collector that is down shows as export errors.
func NewExporter(ctx context.Context, cfg Config) (*Exporter, error) {
	return newExporter(cfg, "traces")
}

// NewMetricExporter returns the exporter of the mcp.server.operation.duration
// histogram of a live session, to the same collector.
func NewMetricExporter(ctx context.Context, cfg Config) (*Exporter, error) {
	return newExporter(cfg, "metrics")
}

func newExporter(cfg Config, signal string) (*Exporter, error) {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	sig := strings.ToUpper(signal)
	env := func(name string) string {
		if v := getenv("OTEL_EXPORTER_OTLP_" + sig + "_" + name); v != "" {
			return v
		}
		return getenv("OTEL_EXPORTER_OTLP_" + name)
	}
	if cfg.Protocol != "" && cfg.Protocol != ProtocolHTTP {
		return nil, fmt.Errorf("protocol %q: %w", cfg.Protocol, ErrProtocol)
	}
	// A signal's own endpoint is used as it is; the base one gets the path.
	endpoint := "http://localhost:4318"
	switch {
	case cfg.Endpoint != "":
		endpoint = signalURL(cfg.Endpoint, signal)
	case getenv("OTEL_EXPORTER_OTLP_"+sig+"_ENDPOINT") != "":
		endpoint = getenv("OTEL_EXPORTER_OTLP_" + sig + "_ENDPOINT")
	case getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "":
		endpoint = signalURL(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), signal)
	default:
		endpoint = signalURL(endpoint, signal)
	}
	if err := checkEndpoint(endpoint); err != nil {
		return nil, err
	}
	e := &Exporter{url: endpoint, headers: http.Header{}, timeout: cfg.Timeout, retry: !cfg.NoRetry}
	if e.timeout <= 0 {
		e.timeout = 10 * time.Second
		if ms, err := strconv.Atoi(env("TIMEOUT")); err == nil && ms > 0 {
			e.timeout = time.Duration(ms) * time.Millisecond
		}
	}
	// "key1=value1,key2=value2", values percent-encoded (W3C Baggage format).
	for _, kv := range strings.Split(env("HEADERS"), ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			continue
		}
		if dv, err := url.PathUnescape(strings.TrimSpace(v)); err == nil {
			v = dv
		}
		e.headers.Add(strings.TrimSpace(k), v)
	}
	switch c := env("COMPRESSION"); c {
	case "", "none":
	case "gzip":
		e.gzip = true
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_COMPRESSION %q: want gzip or none", c)
	}
	tlsConf, err := tlsConfig(env("CERTIFICATE"), env("CLIENT_CERTIFICATE"), env("CLIENT_KEY"))
	if err != nil {
		return nil, err
	}
	e.client = &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, TLSClientConfig: tlsConf,
		MaxIdleConns: 1, IdleConnTimeout: 90 * time.Second}}
	return e, nil
}

func tlsConfig(ca, cert, key string) (*tls.Config, error) {
	if ca == "" && cert == "" {
		return nil, nil
	}
	conf := &tls.Config{}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("OTLP certificate: %w", err)
		}
		conf.RootCAs = x509.NewCertPool()
		if !conf.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("OTLP certificate %s: no PEM certificate in it", ca)
		}
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("OTLP client certificate: %w", err)
		}
		conf.Certificates = []tls.Certificate{pair}
	}
	return conf, nil
}

func checkEndpoint(endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("endpoint %q: %w", endpoint, ErrEndpoint)
	}
	return nil
}

// signalURL appends a signal's path (v1/traces, v1/metrics) to a base
// endpoint, as the OTLP spec does for OTEL_EXPORTER_OTLP_ENDPOINT; a URL that
// already names it is kept.
func signalURL(base, signal string) string {
	u, err := url.Parse(base)
	if err != nil || strings.HasSuffix(u.Path, "/v1/"+signal) {
		return base
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/" + signal
	return u.String()
}

// ExportSpans sends spans in one request.
func (e *Exporter) ExportSpans(ctx context.Context, spans []*Span) error {
	if len(spans) == 0 {
		return nil
	}
	return e.post(ctx, tracesRequest(spans))
}

// Shutdown closes the idle connection; an exporter is not used after it.
func (e *Exporter) Shutdown(context.Context) error {
	e.client.CloseIdleConnections()
	return nil
}

// Retrying: "The client SHOULD interpret HTTP responses with status 429 Too
// Many Requests, 502 Bad Gateway, 503 Service Unavailable and 504 Gateway
// Timeout as retryable", honouring Retry-After; the others are final.
const (
	retries      = 4
	retryInitial = 500 * time.Millisecond
	retryMax     = 8 * time.Second
)

func (e *Exporter) post(ctx context.Context, body []byte) error {
	if e.gzip {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(body)
		zw.Close()
		body = b.Bytes()
	}
	wait := retryInitial
	for attempt := 0; ; attempt++ {
		after, err := e.once(ctx, body)
		if err == nil || !e.retry || after < 0 || attempt == retries {
			return err
		}
		wait = min(max(wait, after), retryMax)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
		wait *= 2
	}
}

// once makes one request. after is how long to wait before a retry (0: the
// backoff's), or -1 when the failure is final.
func (e *Exporter) once(ctx context.Context, body []byte) (after time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return -1, fmt.Errorf("otlp %s: %w", e.url, err)
	}
	req.Header = e.headers.Clone()
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("User-Agent", "mcpshim")
	if e.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("otlp %s: %w", e.url, err)
	}
	defer resp.Body.Close()
	reply, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 == 2 {
		return 0, nil
	}
	err = fmt.Errorf("otlp %s: HTTP %d%s", e.url, resp.StatusCode, statusMessage(reply))
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		if s, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil && s > 0 {
			return time.Duration(s) * time.Second, err
		}
		return 0, err
	}
	return -1, err
}

// statusMessage is the message of the google.rpc.Status a collector answers
// a failure with (field 2, a string), as ": message"; "" when there is none.
func statusMessage(b []byte) string {
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return ""
		}
		b = b[n:]
		var size uint64
		switch key & 7 {
		case wireVarint:
			if _, n = binary.Uvarint(b); n <= 0 {
				return ""
			}
			size = uint64(n)
		case wireFixed64:
			size = 8
		case wireFixed32:
			size = 4
		case wireBytes:
			l, n := binary.Uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return ""
			}
			if key>>3 == 2 {
				return ": " + strings.ToValidUTF8(string(b[n:n+int(l)]), "?")
			}
			b, size = b[n:], l
		default:
			return ""
		}
		if size > uint64(len(b)) {
			return ""
		}
		b = b[size:]
	}
	return ""
}
