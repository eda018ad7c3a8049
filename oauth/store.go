package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/mcpshim-dev/mcpshim/safefile"
	"github.com/mcpshim-dev/mcpshim/termsafe"
)

// Store keeps what a sign-in produced, one file per server and client, in a
// directory only the user can read: tokens, the registrations per issuer and
// the scopes asked for. Files are replaced whole (a temporary file renamed
// over the old one), so a reader never sees half a file; a lock file per
// record serializes the shims that refresh the same token.
type Store struct {
	Dir string
	// Waiting is told, once per wait, who holds a record's lock when it is
	// not free at once (mcpshim auth says so); nil: nobody.
	Waiting func(holder string)
}

// stamp tells whether a record's file changed: a Session rereads the store
// only when it did, so that a refresh or a logout by another process is
// seen at the next request for the cost of a stat.
type stamp struct {
	exists bool
	mod    int64 // nanoseconds
	size   int64
}

func (s *Store) stamp(server, clientKey string) stamp {
	fi, err := os.Stat(s.name(server, clientKey) + ".json")
	if err != nil {
		return stamp{}
	}
	return stamp{exists: true, mod: fi.ModTime().UnixNano(), size: fi.Size()}
}

// Record is one server and client's sign-in.
type Record struct {
	Version int `json:"version"`
	// Server is the MCP endpoint; ClientKey names the client identity the
	// shim was given (ClientKey).
	Server    string `json:"server"`
	ClientKey string `json:"client_key"`
	Resource  string `json:"resource,omitempty"`
	Issuer    string `json:"issuer,omitempty"`
	// AS is the issuer's metadata, kept so that a refresh needs no discovery.
	AS *ServerMetadata `json:"authorization_server,omitempty"`
	// Clients are the identities at each authorization server, keyed by
	// issuer: one is never presented to another.
	Clients map[string]*Client `json:"clients,omitempty"`
	Token   *Token             `json:"token,omitempty"`
	// Scopes are the scopes asked for so far: step-up adds to them.
	Scopes  []string  `json:"scopes,omitempty"`
	Grant   string    `json:"grant,omitempty"`
	Updated time.Time `json:"updated"`
}

// ClientKey names a client identity in the store: the pre-registered id, the
// metadata document URL, or "registered" for dynamic registration.
func ClientKey(clientID, metadataURL string) string {
	switch {
	case clientID != "":
		return "id:" + clientID
	case metadataURL != "":
		return "cimd:" + metadataURL
	}
	return "registered"
}

// StoreKey is the server as the store keys its sign-ins: the URL without
// userinfo, query and fragment, whose secrets (a password, ?api_key=) go in
// no file.
func StoreKey(u *url.URL) string {
	k := *u
	k.User, k.RawQuery, k.ForceQuery, k.Fragment, k.RawFragment = nil, "", false, "", ""
	return k.String()
}

// move takes a record an older shim kept under the whole URL (old) to its
// key: written under the new key, then the old file removed. Nothing to do
// when the new one exists or the old one does not.
func (s *Store) move(old, key, clientKey string) error {
	if old == key {
		return nil
	}
	if _, err := os.Stat(s.name(key, clientKey) + ".json"); err == nil {
		return nil
	}
	r, err := readRecord(s.name(old, clientKey) + ".json")
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	r.Server = key
	if err := s.Save(r); err != nil {
		return err
	}
	return os.Remove(s.name(old, clientKey) + ".json")
}

// DefaultDir is where tokens are kept: $XDG_CONFIG_HOME/mcpshim/auth, else
// the platform's config directory (~/.config, ~/Library/Application Support,
// %AppData%).
func DefaultDir(getenv func(string) string) (string, error) {
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "mcpshim", "auth"), nil
	}
	var base string
	switch runtime.GOOS {
	case "windows":
		base = getenv("AppData")
	case "darwin":
		if h := getenv("HOME"); h != "" {
			base = filepath.Join(h, "Library", "Application Support")
		}
	default:
		if h := getenv("HOME"); h != "" {
			base = filepath.Join(h, ".config")
		}
	}
	if base == "" {
		return "", errors.New("no config directory: set XDG_CONFIG_HOME or HOME")
	}
	return filepath.Join(base, "mcpshim", "auth"), nil
}

func (s *Store) name(server, clientKey string) string {
	h := sha256.Sum256([]byte(server + "\x00" + clientKey))
	return filepath.Join(s.Dir, hex.EncodeToString(h[:12]))
}

// Load reads a record; one never saved is empty, not an error.
func (s *Store) Load(server, clientKey string) (*Record, error) {
	r, err := readRecord(s.name(server, clientKey) + ".json")
	if errors.Is(err, fs.ErrNotExist) {
		return &Record{Version: 1, Server: server, ClientKey: clientKey}, nil
	}
	return r, err
}

func readRecord(path string) (*Record, error) {
	data, err := safefile.Read(path) // never through a symbolic link
	if err != nil {
		return nil, err
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s is damaged (%v): remove it with mcpshim auth logout", path, err)
	}
	return &r, nil
}

// Save writes a record whole, readable by the user alone.
func (s *Store) Save(r *Record) error {
	if err := s.mkdir(); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	path := s.name(r.Server, r.ClientKey) + ".json"
	// A new file renamed over the old one, its owner's only (0600; the
	// owners' access list on Windows), never written through a link.
	if err := safefile.Write(path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("saving the sign-in to %s: %w", s.Dir, err)
	}
	return nil
}

// mkdir makes the directory 0700, or checks an existing one is the user's
// alone (safefile.Dir): tokens never go where another user can reach.
func (s *Store) mkdir() error {
	// The parent first: its owner could put a directory of their own in
	// the token directory's place, between the check and the write.
	if err := checkParent(filepath.Dir(s.Dir)); err != nil {
		return fmt.Errorf("the token directory %s: %w", s.Dir, err)
	}
	if _, err := safefile.Dir(s.Dir); err != nil {
		return fmt.Errorf("the token directory %s: %w", s.Dir, err)
	}
	return nil
}

// Lock takes the record's lock, waiting until it is free or ctx is done; the
// returned function releases it. Shims of the same server take it around a
// refresh or a sign-in, so that a rotated refresh token is used once.
func (s *Store) Lock(ctx context.Context, server, clientKey string) (func(), error) {
	return s.lock(ctx, server, clientKey, s.Waiting)
}

func (s *Store) lock(ctx context.Context, server, clientKey string, waiting func(string)) (func(), error) {
	if err := s.mkdir(); err != nil {
		return nil, err
	}
	path := s.name(server, clientKey) + ".lock"
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("the token lock %s: %w", path, err)
	}
	told := false
	for {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("the token lock %s: %w", path, err)
		}
		if ok {
			// The holder's name, for whoever waits next: the lock itself
			// is the kernel's, dropped when this process dies.
			f.Truncate(0)
			f.WriteAt(fmt.Appendf(nil, "pid %d since %s", os.Getpid(), time.Now().Format("15:04:05")), 0)
			return func() { f.Truncate(0); unlock(f); f.Close() }, nil
		}
		if !told && waiting != nil {
			told = true
			waiting(holder(path))
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for %s: %w", holder(path), ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// holder says who holds the lock at path, as the holder wrote it.
func holder(path string) string {
	b, _ := os.ReadFile(path)
	who := "another mcpshim"
	if h := strings.TrimSpace(string(b)); h != "" && len(h) < 64 && termsafe.String(h) == h {
		who += " (" + h + ")"
	}
	return who + " signing in to the same server or refreshing its token (it holds the lock " + path + "; its browser page may be waiting: finish or close it, or stop that process)"
}

// List reads every record, sorted by server.
func (s *Store) List() ([]*Record, error) {
	paths, err := filepath.Glob(filepath.Join(s.Dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []*Record
	for _, p := range paths {
		r, err := readRecord(p)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Server != out[j].Server {
			return out[i].Server < out[j].Server
		}
		return out[i].ClientKey < out[j].ClientKey
	})
	return out, nil
}

// Remove deletes a record. Its lock file stays: removed while another
// process waits on it, a third would lock a new file and both would hold
// the lock.
func (s *Store) Remove(r *Record) error {
	if err := os.Remove(s.name(r.Server, r.ClientKey) + ".json"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
