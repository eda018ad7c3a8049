package mcp

import (
	"encoding/json"
	"fmt"
)

// ToolsPage is one page of a tools/list result.
type ToolsPage struct {
	Tools []json.RawMessage
	// More says another page follows, asked for with Cursor. 2026-07-28
	// (utilities/pagination): "an empty string is a valid cursor and thus
	// MUST NOT be treated as the end of results": only an absent (or null)
	// nextCursor ends the list.
	More   bool
	Cursor string
}

// ParseToolsPage reads one tools/list result.
func ParseToolsPage(result []byte) (ToolsPage, error) {
	var r struct {
		Tools      []json.RawMessage `json:"tools"`
		NextCursor *string           `json:"nextCursor"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return ToolsPage{}, fmt.Errorf("tools/list result: %w", err)
	}
	p := ToolsPage{Tools: r.Tools}
	if r.NextCursor != nil {
		p.More, p.Cursor = true, *r.NextCursor
	}
	return p, nil
}

// MaxPages bounds paging against a server whose cursors never end.
const MaxPages = 1000

// Pager walks the pages of one tools/list: fed each result in turn, it
// says whether to ask for another and with which cursor, and stops a server
// that repeats a cursor or pages forever.
type Pager struct {
	Tools []json.RawMessage // every tool of the pages so far
	seen  map[string]bool
	pages int
}

// Add takes the next page's result. more reports whether another page must
// be asked for, with cursor.
func (p *Pager) Add(result []byte) (cursor string, more bool, err error) {
	page, err := ParseToolsPage(result)
	if err != nil {
		return "", false, err
	}
	p.Tools = append(p.Tools, page.Tools...)
	p.pages++
	if !page.More {
		return "", false, nil
	}
	if p.seen == nil {
		p.seen = map[string]bool{}
	}
	if p.seen[page.Cursor] {
		return "", false, fmt.Errorf("tools/list: cursor %q repeats", page.Cursor)
	}
	if p.pages >= MaxPages {
		return "", false, fmt.Errorf("tools/list: more than %d pages", MaxPages)
	}
	p.seen[page.Cursor] = true
	return page.Cursor, true, nil
}

// CursorParams are the params of the request for the page at cursor; the
// first page (first true) has none.
func CursorParams(cursor string, first bool) map[string]any {
	if first {
		return map[string]any{}
	}
	return map[string]any{"cursor": cursor}
}

// IsFirstPage reports whether tools/list params ask for the first page: no
// cursor member at all (an empty cursor is a cursor).
func IsFirstPage(params []byte) bool { return Member(params, "cursor") == nil }
