// Package cause picks, from a process's stderr, the line that says why it
// failed. The shim's owed errors (proc), the verdict of a run (verdict) and
// the probe all use this one chooser, so the cause a client is told and the
// cause a person reads in the ledger are the same line. It knows nothing of
// processes, ledgers or MCP: lines in, a line out.
package cause

import (
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// The last stderr line is often not the one that says what went wrong: Node
// ends every uncaught exception with its version line, Go and Rust end a
// panic with a stack, and a server killed while starting leaves its banner.
// The cause is the last line that states an error; a plain last line is only
// a fallback for a server that crashed without stating one.

// lazy compiles a regexp on first use (a child's death), not at every shim's start.
func lazy(src string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(src) })
}

var (
	// A log prefix in front of a statement: a timestamp, a [bracketed] tag.
	logPrefix = lazy(`^(?:\d{4}[-/]\d\d[-/]\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?Z?\s+|\[[^\]]{1,40}\]\s*)+`)
	// Lines that state an error: Node's and Python's exception lines (Error:,
	// TypeError:, Error [ERR_MODULE_NOT_FOUND]:, KeyError: 'X',
	// httpx.ConnectError:), Go's panic: and fatal error:, Rust's panicked at,
	// the fatal:/error: of tools and loggers, and logfmt's error=,
	// fatal_error= and level=error.
	stated = lazy(`^(?:(?:Uncaught )?(?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*)?(?:Error|Exception|Exit|Interrupt)(?: \[[\w.-]+\])?(?::|$)` +
		`|panic: |fatal(?: error)?:|FATAL\b|(?i:error)(?:\[\w+\])?:|ERROR\b|CRITICAL\b|Exception in thread |thread '.*' (?:\(\d+\) )?panicked at ` +
		`|(?:fatal_error|error)=|.*\blevel=(?:error|fatal)\b)`)
	// Lines that never say why: stack frames and the lines runtimes print
	// around a crash.
	chatter = lazy(`^(?:\s|Node\.js v\d|Traceback \(most recent call last\)|goroutine \d+ \[|stack backtrace:|note: run with|note: Some details|exit status \d|[{}^]|code: ')`)
)

// Finder follows a process's stderr line by line and keeps the line that
// states its error. It sees every line, not only a tail's, so a long stack
// after the statement does not push it out. The zero Finder is ready; it is
// not safe for concurrent use.
type Finder struct {
	stated string // the last line stating an error
	last   string // the last line that is not chatter
	join   bool   // stated ends in a colon: its message is on the next line (Rust's panics)
}

// Add follows one more line, without its newline.
func (c *Finder) Add(line string) {
	if !utf8.ValidString(line) {
		line = strings.ToValidUTF8(line, "\uFFFD")
	}
	if c.join {
		c.join = false
		if t := strings.TrimSpace(line); t != "" && !chatter().MatchString(line) {
			c.stated += " " + t
			return
		}
	}
	if strings.TrimSpace(line) == "" || chatter().MatchString(line) || engineChatter().MatchString(line) {
		return
	}
	line = strings.TrimRight(line, " \t")
	c.last = line
	if stated().MatchString(logPrefix().ReplaceAllString(line, "")) || engineStated().MatchString(line) {
		c.stated = line
		c.join = strings.HasSuffix(line, ":")
	}
}

// Cause is the line stating an error, or with stated false the last line
// that is not a stack frame or a runtime's trailer ("" for none).
func (c *Finder) Cause() (line string, stated bool) {
	if c.stated != "" {
		return c.stated, true
	}
	return c.last, false
}

// Choose picks the line of a stderr tail that states why the process
// failed: the last one stating an error (Error:, panic:, fatal:, a Python
// exception line, Rust's panic with its message), else the last line that is
// not a stack frame or a runtime's trailer, with stated false.
func Choose(lines []string) (line string, stated bool) {
	var c Finder
	for _, l := range lines {
		c.Add(l)
	}
	return c.Cause()
}
