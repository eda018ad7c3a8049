package tap

import (
	"time"

	"github.com/mcpshim-dev/mcpshim/mcp"
)

// Observation is one line a relay saw, as the tracker reads it. The stdio
// relay and the HTTP bridge each make one per line; the tap knows neither.
type Observation struct {
	// Data is the line without its newline, at most the relay's observation
	// limit. Once handed to the recorder it is the recorder's.
	Data []byte
	// Size counts every byte of the line on the wire, newline included.
	Size int64
	// Truncated is set when Data holds only the first bytes of the line.
	Truncated bool
	// Unterminated is set when the stream ended before the line's newline.
	Unterminated bool
	// Forwarded is false when the line was kept from its destination.
	Forwarded bool
	// Msg is what the line is, classified from every byte of it.
	Msg mcp.Msg
	// End is when the line's last bytes were read.
	End time.Time
}
