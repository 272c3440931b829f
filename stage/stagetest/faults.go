package stagetest

import (
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"lakegate/localstack/standin"
)

// S3 operations as Faulty names them (Op).
const (
	OpListObjects     = "ListObjectsV2"
	OpListUploads     = "ListMultipartUploads"
	OpDeleteObjects   = "DeleteObjects"
	OpCreateUpload    = "CreateMultipartUpload"
	OpUploadPart      = "UploadPart"
	OpCompleteUpload  = "CompleteMultipartUpload"
	OpAbortUpload     = "AbortMultipartUpload"
	OpCopyObject      = "CopyObject"
	OpPutObject       = "PutObject"
	OpGetObject       = "GetObject"
	OpHeadObject      = "HeadObject"
	OpDeleteObject    = "DeleteObject"
	OpOtherBucketCall = "Bucket"
)

// Faulty is an S3 backend whose server misbehaves on demand: an
// http.Handler in front of the in-process stand-in
// (lakegate/localstack/standin) that answers chosen requests with 5xx
// errors, cuts listing answers into small pages, lets a test rewrite
// listing answers (keys outside the stage, a truncated answer without a
// continuation token), and logs every request with the region of its
// signature. It always uses the stand-in, whatever AWS_ENDPOINT_URL says:
// the faults need a server the test controls. The embedded Backend is the
// S3 backend on that server (stores opened through it record their
// requests in Sent, and the stand-in's log is Received).
type Faulty struct {
	*Backend
	// URL is the server's base URL (the descriptor's endpoint).
	URL string

	next http.Handler

	mu    sync.Mutex
	fails []fault
	page  int
	edit  func(*Listing)
	log   []Received
}

type fault struct {
	op     string
	status int
	left   int
}

// Received is a request as the fault layer received it.
type Received struct {
	Op     string     // the S3 operation (OpListObjects, ...)
	Method string     // the HTTP method
	Path   string     // decoded URL path: /bucket/key
	Query  url.Values // decoded query
	// Region is the region of the request's SigV4 credential scope ("" when
	// the request is not signed in the Authorization header).
	Region string
	Status int // the status answered
}

// Listing is a listing answer (ListObjectsV2 or ListMultipartUploads) as
// EditListings sees and changes it. Keys are absolute (bucket) keys.
type Listing struct {
	Op        string   // OpListObjects or OpListUploads
	Keys      []string // object keys, or the keys of open uploads
	UploadIDs []string // the upload ids, one per key (uploads only)
	Truncated bool     // IsTruncated
	// Next is the continuation token (objects) or the next key marker
	// (uploads); "" sends none.
	Next string
	// NextUploadID is the next upload id marker (uploads only).
	NextUploadID string
}

// FaultyS3 starts a Faulty backend on 127.0.0.1:0, torn down with
// t.Cleanup. It behaves like the stand-in until a test asks for a fault.
func FaultyS3(t *testing.T) *Faulty {
	t.Helper()
	srv, err := standin.New(standin.Config{Buckets: []string{"lakegate"}})
	if err != nil {
		t.Fatal(err)
	}
	f := &Faulty{next: srv}
	hs := httptest.NewServer(f)
	t.Cleanup(hs.Close)
	f.URL = hs.URL
	f.Backend = s3Backend(t, "lakegate", hs.URL, standinConfig(), func() []Request {
		var out []Request
		for _, r := range srv.Requests() {
			out = append(out, fromStandin("lakegate", r))
		}
		return out
	})
	return f
}

// FailNext answers the next n requests of operation op ("" for any) with
// status (500 InternalError, 503 ServiceUnavailable, others
// InjectedFault) without passing them to the stand-in. Faults queue in the
// order they are asked for.
func (f *Faulty) FailNext(op string, n, status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fails = append(f.fails, fault{op: op, status: status, left: n})
}

// PageSize cuts every listing answer to at most n entries (0: no cut),
// continuing with a token or marker the stand-in understands, as a server
// with a smaller page size than the one asked for does.
func (f *Faulty) PageSize(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.page = n
}

// EditListings calls edit on every listing answer, after PageSize's cut;
// nil stops editing.
func (f *Faulty) EditListings(edit func(*Listing)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.edit = edit
}

// Log returns every request received so far.
func (f *Faulty) Log() []Received {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Received(nil), f.log...)
}

// Count returns how many requests of operation op were received so far.
func (f *Faulty) Count(op string) int {
	n := 0
	for _, r := range f.Log() {
		if r.Op == op {
			n++
		}
	}
	return n
}

// ServeHTTP implements http.Handler.
func (f *Faulty) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := Received{Op: Operation(r), Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Region: scopeRegion(r)}
	defer func() {
		f.mu.Lock()
		f.log = append(f.log, rec)
		f.mu.Unlock()
	}()
	f.mu.Lock()
	status, page, edit := 0, f.page, f.edit
	for i := range f.fails {
		if fl := &f.fails[i]; fl.left > 0 && (fl.op == "" || fl.op == rec.Op) {
			fl.left--
			status = fl.status
			break
		}
	}
	f.mu.Unlock()
	if status != 0 {
		_, _ = io.Copy(io.Discard, r.Body)
		rec.Status = status
		code := map[int]string{http.StatusInternalServerError: "InternalError", http.StatusServiceUnavailable: "ServiceUnavailable"}[status]
		if code == "" {
			code = "InjectedFault"
		}
		standin.WriteError(w, status, code, "injected by stagetest.Faulty")
		return
	}
	if rec.Op != OpListObjects && rec.Op != OpListUploads {
		sw := standin.NewStatusWriter(w)
		f.next.ServeHTTP(sw, r)
		rec.Status = sw.Status
		return
	}
	rr := httptest.NewRecorder()
	f.next.ServeHTTP(rr, r)
	body := rr.Body.Bytes()
	if rr.Code == http.StatusOK {
		var err error
		if body, err = rewriteListing(rec, body, page, edit); err != nil {
			rec.Status = http.StatusInternalServerError
			standin.WriteError(w, rec.Status, "InternalError", "stagetest.Faulty could not rewrite the listing: "+err.Error())
			return
		}
	}
	for k, v := range rr.Header() {
		if k != "Content-Length" {
			w.Header()[k] = v
		}
	}
	rec.Status = rr.Code
	w.WriteHeader(rr.Code)
	_, _ = w.Write(body)
}

// Operation names the S3 operation of a path-style request.
func Operation(r *http.Request) string {
	q := r.URL.Query()
	_, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	has := func(p string) bool { _, ok := q[p]; return ok }
	if key == "" {
		switch {
		case r.Method == http.MethodGet && q.Get("list-type") == "2":
			return OpListObjects
		case r.Method == http.MethodGet && has("uploads"):
			return OpListUploads
		case r.Method == http.MethodPost && has("delete"):
			return OpDeleteObjects
		}
		return OpOtherBucketCall
	}
	switch {
	case r.Method == http.MethodPost && has("uploads"):
		return OpCreateUpload
	case r.Method == http.MethodPut && has("uploadId"):
		return OpUploadPart
	case r.Method == http.MethodPost && has("uploadId"):
		return OpCompleteUpload
	case r.Method == http.MethodDelete && has("uploadId"):
		return OpAbortUpload
	case r.Method == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") != "":
		return OpCopyObject
	case r.Method == http.MethodPut:
		return OpPutObject
	case r.Method == http.MethodGet:
		return OpGetObject
	case r.Method == http.MethodHead:
		return OpHeadObject
	case r.Method == http.MethodDelete:
		return OpDeleteObject
	}
	return r.Method
}

// scopeRegion returns the region of the Authorization header's credential
// scope (Credential=AKID/date/region/service/aws4_request).
func scopeRegion(r *http.Request) string {
	_, c, ok := strings.Cut(r.Header.Get("Authorization"), "Credential=")
	if !ok {
		return ""
	}
	c, _, _ = strings.Cut(c, ",")
	if parts := strings.Split(c, "/"); len(parts) == 5 {
		return parts[2]
	}
	return ""
}

const s3Namespace = "http://s3.amazonaws.com/doc/2006-03-01/"

// The listing answers, with the fields the SDK reads.
type (
	xmlListObjects struct {
		XMLName               xml.Name `xml:"ListBucketResult"`
		Xmlns                 string   `xml:"xmlns,attr"`
		Name                  string
		Prefix                string
		StartAfter            string `xml:",omitempty"`
		ContinuationToken     string `xml:",omitempty"`
		NextContinuationToken string `xml:",omitempty"`
		KeyCount              int
		MaxKeys               int
		IsTruncated           bool
		Contents              []xmlObject
	}
	xmlObject struct {
		Key          string
		LastModified string `xml:",omitempty"`
		ETag         string `xml:",omitempty"`
		Size         int64
		StorageClass string `xml:",omitempty"`
	}
	xmlListUploads struct {
		XMLName            xml.Name `xml:"ListMultipartUploadsResult"`
		Xmlns              string   `xml:"xmlns,attr"`
		Bucket             string
		KeyMarker          string `xml:",omitempty"`
		UploadIdMarker     string `xml:",omitempty"`
		NextKeyMarker      string `xml:",omitempty"`
		NextUploadIdMarker string `xml:",omitempty"`
		Prefix             string
		MaxUploads         int `xml:",omitempty"`
		IsTruncated        bool
		Uploads            []xmlUpload `xml:"Upload"`
	}
	xmlUpload struct {
		Key          string
		UploadId     string
		Initiated    string `xml:",omitempty"`
		StorageClass string `xml:",omitempty"`
	}
)

// fakeModified is the LastModified of keys an edit adds.
const fakeModified = "2026-01-01T00:00:00.000Z"

func rewriteListing(rec Received, body []byte, page int, edit func(*Listing)) ([]byte, error) {
	if rec.Op == OpListObjects {
		var res xmlListObjects
		if err := xml.Unmarshal(body, &res); err != nil {
			return nil, fmt.Errorf("decode ListObjectsV2: %w", err)
		}
		l := Listing{Op: rec.Op, Truncated: res.IsTruncated, Next: res.NextContinuationToken}
		byKey := map[string]xmlObject{}
		for _, o := range res.Contents {
			l.Keys = append(l.Keys, o.Key)
			byKey[o.Key] = o
		}
		if page > 0 && len(l.Keys) > page {
			l.Keys = l.Keys[:page]
			// The stand-in's token is the base64 of the last key listed.
			l.Truncated, l.Next = true, base64.URLEncoding.EncodeToString([]byte(l.Keys[page-1]))
		}
		if edit != nil {
			edit(&l)
		}
		res.Xmlns, res.IsTruncated, res.NextContinuationToken, res.Contents = s3Namespace, l.Truncated, l.Next, nil
		for _, k := range l.Keys {
			o, ok := byKey[k]
			if !ok {
				o = xmlObject{Key: k, LastModified: fakeModified, ETag: `"0"`, Size: 1}
			}
			res.Contents = append(res.Contents, o)
		}
		res.KeyCount = len(res.Contents)
		return xml.Marshal(res)
	}
	var res xmlListUploads
	if err := xml.Unmarshal(body, &res); err != nil {
		return nil, fmt.Errorf("decode ListMultipartUploads: %w", err)
	}
	l := Listing{Op: rec.Op, Truncated: res.IsTruncated, Next: res.NextKeyMarker, NextUploadID: res.NextUploadIdMarker}
	after := rec.Query.Get("key-marker")
	for _, u := range res.Uploads {
		// Uploads after the marker only, whatever the stand-in makes of it
		// (the tests give their uploads distinct keys).
		if after == "" || u.Key > after {
			l.Keys, l.UploadIDs = append(l.Keys, u.Key), append(l.UploadIDs, u.UploadId)
		}
	}
	if page > 0 && len(l.Keys) > page {
		l.Keys, l.UploadIDs = l.Keys[:page], l.UploadIDs[:page]
		l.Truncated, l.Next, l.NextUploadID = true, l.Keys[page-1], l.UploadIDs[page-1]
	}
	if edit != nil {
		edit(&l)
	}
	res.Xmlns, res.IsTruncated, res.NextKeyMarker, res.NextUploadIdMarker, res.Uploads = s3Namespace, l.Truncated, l.Next, l.NextUploadID, nil
	for i, k := range l.Keys {
		id := ""
		if i < len(l.UploadIDs) {
			id = l.UploadIDs[i]
		}
		res.Uploads = append(res.Uploads, xmlUpload{Key: k, UploadId: id, Initiated: fakeModified, StorageClass: "STANDARD"})
	}
	return xml.Marshal(res)
}
