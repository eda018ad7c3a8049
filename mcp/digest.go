package mcp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// DigestVersion prefixes every tool digest so the canonical form can change
// without old locks silently mismatching.
const DigestVersion = "sha256/v1:"

// ToolDigest returns a tool definition's name and its DigestVersion digest:
// hex SHA-256 over the canonical JSON of its name, description, inputSchema,
// outputSchema and annotations. Canonical means object keys sorted, no
// insignificant whitespace, no HTML escaping, numbers as the server wrote
// them; an absent field and a null one are the same. Other members (title,
// icons, _meta) do not count. The probe, the lock and the ledger share it.
func ToolDigest(raw []byte) (name, digest string, err error) {
	name, digest, _, err = ToolDigests(raw)
	return name, digest, err
}

// ToolDigests is ToolDigest plus the shape digest: the same without the
// name, so that equal shapes under different names show a probable rename.
func ToolDigests(raw []byte) (name, digest, shape string, err error) {
	var def map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&def); err != nil {
		return "", "", "", fmt.Errorf("tool definition: %w", err)
	}
	name, ok := def["name"].(string)
	if !ok || name == "" {
		return "", "", "", ErrToolNoName
	}
	picked := map[string]any{}
	for _, f := range []string{"name", "description", "inputSchema", "outputSchema", "annotations"} {
		if v := def[f]; v != nil {
			picked[f] = v
		}
	}
	if digest, err = canonicalDigest(picked); err != nil {
		return "", "", "", fmt.Errorf("tool %s: %w", name, err)
	}
	delete(picked, "name")
	if shape, err = canonicalDigest(picked); err != nil {
		return "", "", "", fmt.Errorf("tool %s: %w", name, err)
	}
	return name, digest, shape, nil
}

// ErrToolNoName is a tool definition without a name.
var ErrToolNoName = errors.New("tool definition has no name")

// canonicalDigest hashes v's canonical JSON: encoding/json sorts map keys,
// and every object of a decoded definition is a map.
func canonicalDigest(v any) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	sum := sha256.Sum256(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return DigestVersion + hex.EncodeToString(sum[:]), nil
}

// SurfaceDigest digests a whole tool surface: the sorted name=digest pairs.
func SurfaceDigest(digests map[string]string) string {
	names := make([]string, 0, len(digests))
	for n := range digests {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		b.WriteString(n + "=" + digests[n] + "\n")
	}
	sum := sha256.Sum256([]byte(b.String()))
	return DigestVersion + hex.EncodeToString(sum[:])
}

// Sha256 is the hex digest used for sizes-and-digests capture.
func Sha256(b []byte) string {
	sum := sha256.Sum256(b)
	var h [2 * sha256.Size]byte
	hex.Encode(h[:], sum[:])
	return string(h[:]) // one allocation, not EncodeToString's two
}

// DiffTools compares two tool lists, each a map of name to ToolDigest: the
// tools added and removed, sorted, and whether a tool in both was redefined.
func DiffTools(before, after map[string]string) (added, removed []string, redefined bool) {
	for n, d := range after {
		if old, ok := before[n]; !ok {
			added = append(added, n)
		} else if old != d {
			redefined = true
		}
	}
	for n := range before {
		if _, ok := after[n]; !ok {
			removed = append(removed, n)
		}
	}
	sort.Strings(added)
	sort.Strings(removed)
	return added, removed, redefined
}
