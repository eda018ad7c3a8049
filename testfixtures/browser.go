package testfixtures

import (
	"fmt"
	"net/http"
	"time"
)

// browse stands in for a person's browser at an authorization server that
// approves at once (the MCP conformance suite's does): it GETs the
// authorization URL, then the Location it redirects to, the loopback
// redirect URI of the shim that is signing in. $BROWSER is
// "mcpshim fixture browser --url %s".
func browse(o options, st stdio) int {
	c := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(o.url)
	if err != nil {
		fmt.Fprintln(st.err, "browser:", err)
		return 1
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if loc == "" {
		fmt.Fprintf(st.err, "browser: HTTP %d without a Location\n", resp.StatusCode)
		return 1
	}
	if resp, err = c.Get(loc); err != nil {
		fmt.Fprintln(st.err, "browser:", err)
		return 1
	}
	resp.Body.Close()
	fmt.Fprintf(st.err, "browser: the redirect answered HTTP %d\n", resp.StatusCode)
	return 0
}
