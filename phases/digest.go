package phases

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// DigestVersion prefixes every tool digest so the canonical form can change
// without old locks silently mismatching.
const DigestVersion = "sha256/v1:"

// ToolDigest returns a tool's name and the digest of its canonical definition:
// sha256 over the JSON of name, description, inputSchema, outputSchema and
// annotations with keys sorted and no insignificant whitespace.
func ToolDigest(raw []byte) (name, digest string, err error) {
	var t struct {
		Name         string `json:"name"`
		Description  any    `json:"description,omitempty"`
		InputSchema  any    `json:"inputSchema,omitempty"`
		OutputSchema any    `json:"outputSchema,omitempty"`
		Annotations  any    `json:"annotations,omitempty"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return "", "", fmt.Errorf("tool definition: %w", err)
	}
	if t.Name == "" {
		return "", "", fmt.Errorf("tool definition has no name")
	}
	// Marshalling decoded values sorts object keys: the canonical form.
	canon, err := json.Marshal(t)
	if err != nil {
		return "", "", err
	}
	sum := sha256.Sum256(canon)
	return t.Name, DigestVersion + hex.EncodeToString(sum[:]), nil
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
	return hex.EncodeToString(sum[:])
}
