package ledger

// The external tests compare the scanner's parse with Decode.

func (s *Scanner) Parse(line []byte) bool { return s.parse(line) }
