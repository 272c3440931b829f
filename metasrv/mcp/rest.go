package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"lakegate/metasrv/api"
)

// maxAnswerBytes bounds a REST answer read into memory.
const maxAnswerBytes = 32 << 20

// v2JSON is the content type of the v2 (name/value pair) tag association
// body.
const v2JSON = api.MediaV2

// errNoCredentials is the answer to a call that carries no credentials.
var errNoCredentials = errors.New("no credentials: the request carries no Authorization header")

// toolError is an error answer of metasrv's REST API as a tool error:
// metasrv's message (the status text when it has none), the HTTP status
// and the exception type.
type toolError struct{ e *api.Error }

func (t toolError) Error() string {
	msg := t.e.Message
	if msg == "" {
		msg = http.StatusText(t.e.Status)
	}
	if t.e.Type != "" {
		return fmt.Sprintf("%s (HTTP %d, %s)", msg, t.e.Status, t.e.Type)
	}
	return fmt.Sprintf("%s (HTTP %d)", msg, t.e.Status)
}

func (t toolError) Unwrap() error { return t.e }

// restClient calls metasrv's REST API under one metalake.
type restClient struct {
	base     string // scheme://host[:port], no trailing slash
	metalake string
	hc       *http.Client
}

// lakePath returns the URL path of segs (each path-escaped) under the
// metalake.
func (c *restClient) lakePath(segs ...string) string {
	var b strings.Builder
	for _, s := range append([]string{"api", "metalakes", c.metalake}, segs...) {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}

// call sends one request with the Authorization header value auth and
// returns the decoded JSON object of a 2xx answer without the envelope's
// "code". body, when not nil, is sent as JSON with contentType.
func (c *restClient) call(ctx context.Context, auth, method, path string, query url.Values, body any, contentType string) (map[string]json.RawMessage, error) {
	if auth == "" {
		return nil, errNoCredentials
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", auth)
	if rd != nil {
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("Accept", contentType)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		// A transport error names the URL (never a header); strip Go's
		// wrapping to a plain sentence.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("metasrv unreachable: %v", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if err != nil {
		return nil, fmt.Errorf("reading metasrv's answer: %v", err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, restError(resp.StatusCode, raw)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("metasrv answered something other than a JSON object (HTTP %d)", resp.StatusCode)
	}
	delete(obj, "code")
	return obj, nil
}

// restError decodes an error answer. Only the envelope's fields are kept
// (api.DecodeError): a body that is not an envelope is reduced to the
// status text, so nothing else a server might echo reaches the caller.
func restError(status int, raw []byte) error {
	return toolError{api.DecodeError(status, raw)}
}
