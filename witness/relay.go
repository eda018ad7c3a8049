package witness

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// relayExchange sends head and the request body to up, then copies response
// heads and the final response's body to child, byte for byte. It uses
// net/http only to learn each message's framing. keep reports whether both
// messages ended where the child connection can carry another request; a 101
// response leaves the connections for the caller to splice.
func relayExchange(child, up io.Writer, fromChild, fromUp *bufio.Reader, head []byte, req *http.Request) (status int, keep bool, err error) {
	if _, err := up.Write(head); err != nil {
		return 0, false, err
	}
	var bodyErr error
	bodySent := false
	sendBody := func() {
		bodySent = true
		bodyErr = copyBody(up, fromChild, req.TransferEncoding, req.ContentLength)
	}
	// With Expect: 100-continue the child holds its body until the origin asks.
	if !strings.EqualFold(req.Header.Get("Expect"), "100-continue") {
		sendBody()
	}
	for {
		// A body write can fail because the origin answered early; its answer still counts.
		rhead, err := readHead(fromUp, false)
		if err != nil {
			return 0, false, firstErr(bodyErr, err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(rhead)), req)
		if err != nil {
			return 0, false, firstErr(bodyErr, err)
		}
		if _, err := child.Write(rhead); err != nil {
			return resp.StatusCode, false, err
		}
		if resp.StatusCode == http.StatusSwitchingProtocols {
			return resp.StatusCode, false, bodyErr
		}
		if resp.StatusCode/100 == 1 {
			if resp.StatusCode == http.StatusContinue && !bodySent {
				sendBody()
			}
			continue
		}
		untilClose, err := copyResponseBody(child, fromUp, req.Method, resp)
		keep = bodySent && bodyErr == nil && err == nil && !req.Close && !resp.Close && !untilClose
		return resp.StatusCode, keep, firstErr(bodyErr, err)
	}
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// copyBody copies a request body framed by chunked encoding or Content-Length.
func copyBody(dst io.Writer, src *bufio.Reader, te []string, length int64) error {
	switch {
	case len(te) > 0 && te[0] == "chunked":
		return copyChunked(dst, src)
	case length > 0:
		return copyN(dst, src, length)
	}
	return nil
}

// copyResponseBody copies the body a response to method carries, and reports
// whether it was delimited by the origin closing the connection.
func copyResponseBody(dst io.Writer, src *bufio.Reader, method string, resp *http.Response) (untilClose bool, err error) {
	code := resp.StatusCode
	switch {
	case method == http.MethodHead, code/100 == 1, code == http.StatusNoContent, code == http.StatusNotModified:
		return false, nil
	case len(resp.TransferEncoding) > 0 && resp.TransferEncoding[0] == "chunked":
		return false, copyChunked(dst, src)
	case resp.ContentLength >= 0:
		return false, copyN(dst, src, resp.ContentLength)
	}
	_, err = io.Copy(dst, src)
	return true, err
}

func copyN(dst io.Writer, src io.Reader, n int64) error {
	_, err := io.CopyN(dst, src, n)
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// copyChunked copies a chunked body raw: sizes, extensions, data and trailers.
func copyChunked(dst io.Writer, src *bufio.Reader) error {
	for {
		line, err := readLine(src, maxHeadBytes)
		if err != nil {
			return unexpected(err)
		}
		if _, err := dst.Write(line); err != nil {
			return err
		}
		size, err := chunkSize(line)
		if err != nil {
			return err
		}
		if size == 0 {
			break
		}
		if err := copyN(dst, src, size+2); err != nil { // data and its CRLF
			return err
		}
	}
	for { // trailer fields end with an empty line
		line, err := readLine(src, maxHeadBytes)
		if err != nil {
			return unexpected(err)
		}
		if _, err := dst.Write(line); err != nil {
			return err
		}
		if blank(line) {
			return nil
		}
	}
}

func chunkSize(line []byte) (int64, error) {
	s := strings.TrimRight(string(line), "\r\n")
	if i := strings.IndexByte(s, ';'); i >= 0 {
		s = s[:i]
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 16, 62)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w: %q", errBadChunk, s)
	}
	return n, nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// readHead reads a message head through its empty line and returns it
// verbatim. Before a request, stray empty lines are skipped (RFC 9112 §2.2).
// On error, head holds what was read.
func readHead(br *bufio.Reader, request bool) (head []byte, err error) {
	for {
		line, err := readLine(br, maxHeadBytes-len(head))
		head = append(head, line...)
		if err != nil {
			if len(head) > 0 {
				err = unexpected(err)
			}
			return head, err
		}
		if blank(line) {
			if request && len(head) == len(line) {
				head = head[:0]
				continue
			}
			return head, nil
		}
	}
}

// readLine reads through the next '\n', at most limit bytes.
func readLine(br *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		line = append(line, frag...)
		if len(line) > limit {
			return line, errHeadTooLarge
		}
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}

func blank(line []byte) bool {
	return string(line) == "\r\n" || string(line) == "\n"
}

// originForm rewrites an absolute-form request line to origin form and leaves
// every other byte of head as it was.
func originForm(head []byte) []byte {
	line, rest, _ := bytes.Cut(head, []byte("\n"))
	method, tail, ok1 := bytes.Cut(line, []byte(" "))
	target, version, ok2 := bytes.Cut(tail, []byte(" "))
	_, afterScheme, ok3 := bytes.Cut(target, []byte("://"))
	if !ok1 || !ok2 || !ok3 {
		return head
	}
	path := []byte("/")
	if i := bytes.IndexAny(afterScheme, "/?"); i >= 0 {
		if afterScheme[i] == '?' {
			path = append(path, afterScheme[i:]...)
		} else {
			path = afterScheme[i:]
		}
	}
	out := make([]byte, 0, len(head))
	out = append(out, method...)
	out = append(out, ' ')
	out = append(out, path...)
	out = append(out, ' ')
	out = append(out, version...)
	out = append(out, '\n')
	return append(out, rest...)
}

// writeStatus answers the child itself, for requests the witness does not relay.
func writeStatus(c io.Writer, code int, msg string) {
	body := "mcpshim egress witness: " + msg + "\n"
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		code, http.StatusText(code), len(body), body)
}

// splice relays both directions until each has finished, half-closing so a
// peer that stops sending can still receive. It returns the bytes carried
// child to destination (out) and back (in), and the first error.
func splice(child net.Conn, fromChild io.Reader, up net.Conn, fromUp io.Reader) (out, in int64, err error) {
	inDone := make(chan error, 1)
	go func() {
		var err error
		in, err = io.Copy(child, fromUp)
		finishSending(child, up, err)
		inDone <- err
	}()
	out, errOut := io.Copy(up, fromChild)
	finishSending(up, child, errOut)
	errIn := <-inDone
	return out, in, firstErr(errOut, errIn)
}

// finishSending ends writes to dst after a copy; a failed copy ends both
// connections so the other direction stops too.
func finishSending(dst, other net.Conn, err error) {
	if err != nil {
		dst.Close()
		other.Close()
		return
	}
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		return
	}
	dst.Close()
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
