package remote_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpshim-dev/mcpshim/oauth"
	"github.com/mcpshim-dev/mcpshim/oauth/oauthtest"
)

// TestStoreKeyHasNoURLSecret: the token file keys a sign-in by the --url
// without its userinfo and query (issue 34 item 7's rest): the secrets in
// them are in no file of the store, and a store written by an older shim
// under the whole URL is read and moved to the new key, keeping the
// sign-in (no browser).
func TestStoreKeyHasNoURLSecret(t *testing.T) {
	var ran counters
	srv := oauthServers(t, &ran, oauthtest.Options{})
	config := t.TempDir()
	dir := filepath.Join(config, "mcpshim", "auth")
	full := strings.Replace(srv.MCPURL(), "http://", "http://alice:pw-9f3e1c@", 1) + "?api_key=key-7d2b40"
	run := func(name, browser string) string {
		ledger := filepath.Join(t.TempDir(), name+".jsonl")
		cmd := shimCommand(t, ledger, "--url", full)
		c := startRaw(t, cmd, "XDG_CONFIG_HOME="+config, "BROWSER="+browser)
		c.send(initialize)
		a := c.answer(1)
		c.in.Close()
		c.exitCode()
		if a["result"] == nil {
			t.Fatalf("%s: initialize got %v\nstderr:\n%s\n%s", name, a, stderrOf(cmd), srv.Log())
		}
		return ledger
	}
	run("first", shim+" fixture browser --url %s")
	files := func() []string {
		got, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		return got
	}
	if len(files()) != 1 {
		t.Fatalf("token files %v, want one", files())
	}
	data, _ := os.ReadFile(files()[0])
	for _, secret := range []string{"pw-9f3e1c", "key-7d2b40", "alice"} {
		if strings.Contains(string(data), secret) {
			t.Errorf("the token file holds %q from the --url:\n%s", secret, data)
		}
	}
	store := &oauth.Store{Dir: dir}
	rec, err := store.Load(srv.MCPURL(), oauth.ClientKey("", ""))
	if err != nil || rec.Token == nil {
		t.Fatalf("no sign-in kept under the URL without userinfo and query (%v): files %v", err, files())
	}

	// As an older shim kept it: under the whole URL.
	os.Remove(files()[0])
	old := *rec
	old.Server = full
	if err := store.Save(&old); err != nil {
		t.Fatal(err)
	}
	ledger := run("migrated", "false")
	if n := len(events(readLedger(t, ledger), "authorization_started")); n != 0 {
		t.Errorf("%d sign-ins with a sign-in kept under the old key, want none (it is moved)", n)
	}
	if got := files(); len(got) != 1 || got[0] != store.File(rec) {
		t.Errorf("token files %v after the move, want only %s", got, store.File(rec))
	}
}
