package witness

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// tlsOrigin starts an HTTPS server on 127.0.0.1 whose certificate names
// host, signed by a fresh CA written to a PEM file for the child to trust.
// The child verifying it through the tunnel shows the witness did not decrypt.
func tlsOrigin(t *testing.T, host, body string) (*httptest.Server, string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "witness test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		io.WriteString(rw, body)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: leafKey}}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, caFile
}

// mcpClient speaks newline-delimited JSON-RPC to a child's stdio.
type mcpClient struct {
	t   *testing.T
	in  io.Writer
	out *bufio.Scanner
	id  int
}

func (m *mcpClient) notify(method string) {
	m.t.Helper()
	fmt.Fprintf(m.in, `{"jsonrpc":"2.0","method":%q}`+"\n", method)
}

// call sends a request and returns the result of the reply.
func (m *mcpClient) call(method, params string) json.RawMessage {
	m.t.Helper()
	m.id++
	fmt.Fprintf(m.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", m.id, method, params)
	if !m.out.Scan() {
		m.t.Fatalf("%s: no reply: %v", method, m.out.Err())
	}
	var reply struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(m.out.Bytes(), &reply); err != nil || reply.ID != m.id || reply.Error != nil {
		m.t.Fatalf("%s: reply %s (%v); want a result for id %d", method, m.out.Bytes(), err, m.id)
	}
	return reply.Result
}

// TestEgressFixture runs a Python MCP server that connects out during startup
// and inside a tool call, and checks the
// witness saw each connection by name, in the phase it happened.
func TestEgressFixture(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	tracker := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		io.WriteString(rw, "tracker ok")
	}))
	t.Cleanup(tracker.Close)
	secure, caFile := tlsOrigin(t, "secure.example.test", "secure ok")

	var mu sync.Mutex
	phase := "launch" // what the shim would know when each attempt arrives
	phases := map[string]string{}
	rec := newRecorder()
	cfg := rec.config("denied.example.test")
	record := cfg.OnAttempt
	cfg.OnAttempt = func(a Attempt) {
		mu.Lock()
		phases[a.ID] = phase
		mu.Unlock()
		record(a)
	}
	setPhase := func(p string) {
		mu.Lock()
		defer mu.Unlock()
		phase = p
	}
	w := startWitness(t, cfg)

	trackerPort := port(t, tracker.Listener.Addr().String())
	securePort := port(t, secure.Listener.Addr().String())
	closed := closedPort(t)
	trackerURL := fmt.Sprintf("http://tracker.example.test:%d/whoami", trackerPort)
	secureURL := fmt.Sprintf("https://secure.example.test:%d/", securePort)
	closedURL := fmt.Sprintf("http://closed.example.test:%d/", closed)
	deniedURL := fmt.Sprintf("http://denied.example.test:%d/", trackerPort)
	nowhereURL := "http://nowhere.invalid/"

	cmd := exec.Command(python, "testdata/egress_server.py", "--cafile", caFile,
		"--startup", trackerURL, "--startup", secureURL,
		"--call", trackerURL, "--call", closedURL, "--call", deniedURL, "--call", nowhereURL)
	cmd.Env = append(os.Environ(), w.Env()...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", python, err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	// Both startup connections complete before the client says anything.
	rec.wait(t, 2)
	setPhase("handshake")
	m := &mcpClient{t: t, in: stdin, out: bufio.NewScanner(stdout)}
	m.call("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"0"}}`)
	m.notify("notifications/initialized")
	setPhase("discovery")
	m.call("tools/list", `{}`)
	setPhase("execution")
	result := m.call("tools/call", `{"name":"fetch_all","arguments":{}}`)
	rec.wait(t, 4)
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("fixture exit: %v; stderr:\n%s", err, stderr.String())
	}

	type seen struct {
		host       string
		port       int
		scheme     string
		method     string
		phase      string
		status     string
		httpStatus int
		tls        bool
	}
	want := []seen{
		{"tracker.example.test", trackerPort, "http", "GET", "launch", StatusConnected, 200, false},
		{"secure.example.test", securePort, "connect", "CONNECT", "launch", StatusConnected, 0, true},
		{"tracker.example.test", trackerPort, "http", "GET", "execution", StatusConnected, 200, false},
		{"closed.example.test", closed, "http", "GET", "execution", StatusRefused, 0, false},
		{"denied.example.test", trackerPort, "http", "GET", "execution", StatusDenied, 0, false},
		{"nowhere.invalid", 80, "http", "GET", "execution", StatusDNSFailure, 0, false},
	}
	attempts, results := rec.snapshot()
	byID := map[string]Result{}
	for _, r := range results {
		byID[r.ID] = r
	}
	var got []seen
	for _, a := range attempts {
		r := byID[a.ID]
		got = append(got, seen{a.Host, a.Port, a.Scheme, a.Method, phases[a.ID], r.Status, r.HTTPStatus, r.TLS})
		if r.Status == StatusConnected && (r.BytesOut == 0 || r.BytesIn == 0) {
			t.Errorf("%s %s: %d bytes out, %d in; want both counted", a.Method, a.Host, r.BytesOut, r.BytesIn)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("witnessed\n%v\nwant\n%v\nfixture stderr:\n%s", got, want, stderr.String())
	}

	// The tool result carries what the origins and the witness answered.
	var call struct {
		Content []struct{ Text string } `json:"content"`
	}
	json.Unmarshal(result, &call)
	if len(call.Content) != 1 || !strings.Contains(call.Content[0].Text, trackerURL+" 200 tracker ok") ||
		!strings.Contains(call.Content[0].Text, deniedURL+" 403") {
		t.Errorf("tools/call result %s; want the tracker's answer and a 403 for the denied host", result)
	}

	// The server's own stderr events agree with the witness.
	var events []string
	for _, line := range strings.Split(stderr.String(), "\n") {
		if ev, ok := ParseServerEvent([]byte(line)); ok && ev.Event == "external_attempt" {
			events = append(events, ev.Phase+" "+field(ev, "channel")+" "+field(ev, "host"))
		}
	}
	wantEvents := []string{
		"launch http tracker.example.test", "launch https secure.example.test",
		"execution http tracker.example.test", "execution http closed.example.test",
		"execution http denied.example.test", "execution http nowhere.invalid",
	}
	if strings.Join(events, "\n") != strings.Join(wantEvents, "\n") {
		t.Errorf("server-reported attempts %q, want %q", events, wantEvents)
	}
	// The child verified the TLS origin's certificate through the tunnel.
	if !strings.Contains(stderr.String(), "phase=launch event=external_result action_id=act_2 status=200") {
		t.Errorf("stderr lacks the TLS fetch's 200 result:\n%s", stderr.String())
	}
}

func field(ev ServerEvent, key string) string {
	for _, f := range ev.Fields {
		if f[0] == key {
			return f[1]
		}
	}
	return ""
}
