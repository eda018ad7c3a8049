package ledger

// The external tests compare the scanner's parse with Decode.

func (h *Head) Parse(line []byte) bool { return h.parse(line) }

func (h *Head) Keys() []string {
	var keys []string
	for _, f := range h.fields {
		keys = append(keys, h.key(&f))
	}
	return keys
}
