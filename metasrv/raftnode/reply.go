package raftnode

import (
	"io"
	"net/http"
)

// CopyReply writes the leader's answer resp to a forwarded request back to
// its caller w: the status, at most limit bytes of the body, and of the
// headers only Content-Type, Retry-After and those named in also (the
// leader's other headers are its own business).
func CopyReply(w http.ResponseWriter, resp *http.Response, limit int64, also ...string) {
	for _, k := range append([]string{"Content-Type", "Retry-After"}, also...) {
		if v := resp.Header.Get(k); v != "" {
			w.Header().Set(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, io.LimitReader(resp.Body, limit))
}
