package oauth

import (
	"context"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
)

// show prints the authorization URL, so that a person on a headless machine
// can open it elsewhere, and opens it in a browser.
func (s *Session) show(ctx context.Context, authURL string) {
	s.mu.Lock()
	prompt := s.cfg.Prompt
	s.mu.Unlock()
	if prompt != nil {
		fmt.Fprintf(prompt, "mcpshim: to sign in to %s, open this URL in a browser (waiting up to %v):\n%s\n", origin(s.cfg.Server), s.cfg.BrowserWait, authURL)
	}
	open := s.cfg.Open
	if open == nil {
		open = func(ctx context.Context, u string) error { return OpenBrowser(s.getenv, u) }
	}
	if err := open(ctx, authURL); err != nil && prompt != nil {
		fmt.Fprintf(prompt, "mcpshim: could not open a browser (%v); open the URL above by hand\n", err)
	}
}

// OpenBrowser opens u with $BROWSER when it is set, else with the platform's
// opener (xdg-open, open, rundll32). $BROWSER is a ':'-separated list of
// commands, as Python's webbrowser and sensible-browser read it; "%s" in a
// command is replaced by the URL, else the URL is its last argument. The
// browser's output never reaches mcpshim's stdout (the wire) and it is not
// waited for.
func OpenBrowser(getenv func(string) string, u string) error {
	var cmds [][]string
	if b := getenv("BROWSER"); b != "" {
		for _, c := range strings.Split(b, string(listSeparator())) {
			f := strings.Fields(c)
			if len(f) == 0 {
				continue
			}
			replaced := false
			for i := range f {
				if strings.Contains(f[i], "%s") {
					f[i], replaced = strings.ReplaceAll(f[i], "%s", u), true
				}
			}
			if !replaced {
				f = append(f, u)
			}
			cmds = append(cmds, f)
		}
	} else {
		switch runtime.GOOS {
		case "darwin":
			cmds = [][]string{{"open", u}}
		case "windows":
			cmds = [][]string{{"rundll32", "url.dll,FileProtocolHandler", u}}
		default:
			cmds = [][]string{{"xdg-open", u}}
		}
	}
	var err error
	for _, c := range cmds {
		cmd := exec.Command(c[0], c[1:]...)
		// No stdin, stdout or stderr: /dev/null.
		if err = cmd.Start(); err == nil {
			// The reaper: returns when the browser command exits.
			go cmd.Wait()
			return nil
		}
	}
	if err == nil {
		err = fmt.Errorf("$BROWSER names no command")
	}
	return err
}

// listSeparator is $BROWSER's separator: ';' on Windows, where ':' is in paths.
func listSeparator() byte {
	if runtime.GOOS == "windows" {
		return ';'
	}
	return ':'
}
