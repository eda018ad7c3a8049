package lock

import (
	"encoding/json"
	"errors"

	"github.com/mcpshim-dev/mcpshim/mcp"
)

// ErrBadTool is returned for a tool definition without a string name.
var ErrBadTool = errors.New("tool definition has no name")

// Tool is one listed tool, identified by digests of its canonical definition.
type Tool struct {
	Name   string `json:"name"`
	Digest string `json:"digest"` // over name, description, inputSchema, outputSchema, annotations
	// ShapeDigest is the same without the name: equal shapes under different
	// names are a probable rename.
	ShapeDigest string `json:"shape_digest"`
}

// DigestPrefix versions the digest (see mcp.ToolDigest).
const DigestPrefix = mcp.DigestVersion

// NewTool digests one tool definition from a tools/list result.
func NewTool(raw json.RawMessage) (Tool, error) {
	name, digest, shape, err := mcp.ToolDigests(raw)
	if errors.Is(err, mcp.ErrToolNoName) {
		return Tool{}, ErrBadTool
	}
	if err != nil {
		return Tool{}, err
	}
	return Tool{Name: name, Digest: digest, ShapeDigest: shape}, nil
}
