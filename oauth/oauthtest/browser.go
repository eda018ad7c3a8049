package oauthtest

import (
	"context"
	"fmt"
	"net/http"
)

// Browser stands in for a person's browser on a server that approves at
// once: it GETs the authorization URL, then the Location it redirects to
// (the loopback redirect URI). It is the $BROWSER of the tests.
func Browser(ctx context.Context, authURL string) error {
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if loc == "" {
		return fmt.Errorf("GET %s: HTTP %d without a Location", authURL, resp.StatusCode)
	}
	req, err = http.NewRequestWithContext(ctx, http.MethodGet, loc, nil)
	if err != nil {
		return err
	}
	resp, err = c.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}
