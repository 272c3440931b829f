package stage_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"lakegate/localstack/standin"
	"lakegate/stage"
	"lakegate/stage/stagetest"
)

// The tests in this file reach what S3Store does when the server or the
// environment is not the test stage's usual one: endpoints and regions
// from elsewhere, failing requests, multipart bodies, and listing answers
// from a server that misbehaves (stagetest.Faulty).

// loopbackOnly passes requests to 127.0.0.1 and refuses every other host,
// so a store that picks the wrong endpoint fails instead of reaching AWS.
type loopbackOnly struct{}

func (loopbackOnly) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Hostname() != "127.0.0.1" {
		return nil, fmt.Errorf("request to %s refused: this test reaches 127.0.0.1 only", r.URL.Host)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func startStandin(t *testing.T, cfg standin.Config) *standin.Server {
	t.Helper()
	cfg.Buckets = []string{"lakegate"}
	srv, err := standin.Start(context.WithoutCancel(t.Context()), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

// TestS3EndpointChoice checks where OpenS3 sends requests: the
// descriptor's endpoint, else AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL,
// else the SDK configuration's.
func TestS3EndpointChoice(t *testing.T) {
	srv := map[string]*standin.Server{}
	for _, n := range []string{"descriptor", "env-s3", "env", "config"} {
		srv[n] = startStandin(t, standin.Config{})
	}
	url := func(n string) string {
		if n == "" {
			return ""
		}
		return srv[n].URL()
	}
	cases := []struct {
		descriptor, envS3, env, config string
		want                           string
	}{
		{"descriptor", "env-s3", "env", "config", "descriptor"},
		{"descriptor", "", "", "config", "descriptor"},
		{"", "env-s3", "env", "config", "env-s3"},
		{"", "env-s3", "", "", "env-s3"},
		{"", "", "env", "config", "env"},
		{"", "", "", "config", "config"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s,%s,%s,%s", c.descriptor, c.envS3, c.env, c.config), func(t *testing.T) {
			t.Setenv("AWS_ENDPOINT_URL_S3", url(c.envS3))
			t.Setenv("AWS_ENDPOINT_URL", url(c.env))
			cfg := aws.Config{Region: "us-east-1", Credentials: aws.CredentialsProviderFunc(testCredentials)}
			if c.config != "" {
				cfg.BaseEndpoint = aws.String(url(c.config))
			}
			d := stage.Descriptor{Version: 1, S3: &stage.S3Descriptor{
				Bucket: "lakegate", Prefix: "endpoint", Region: "us-east-1", Endpoint: url(c.descriptor), PathStyle: true,
			}}
			st, err := stage.OpenS3(t.Context(), d, stage.Config{AWS: &cfg, HTTPClient: &http.Client{Transport: loopbackOnly{}}, MaxAttempts: 1})
			if err != nil {
				t.Fatal(err)
			}
			before := map[string]int{}
			for n, s := range srv {
				before[n] = len(s.Requests())
			}
			if _, err := st.List(t.Context(), "", "", 0); err != nil {
				t.Fatalf("List: %v", err)
			}
			for n, s := range srv {
				if got := len(s.Requests()) - before[n]; (got > 0) != (n == c.want) {
					t.Errorf("server %s received %d requests; want requests at %s only", n, got, c.want)
				}
			}
		})
	}
}

func testCredentials(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: standin.DefaultAccessKeyID, SecretAccessKey: standin.DefaultSecretAccessKey}, nil
}

// TestS3RegionChoice checks the region requests are signed for: the
// descriptor's, else the SDK configuration's, else us-east-1. Each stand-in
// accepts signatures for its one region only.
func TestS3RegionChoice(t *testing.T) {
	cases := []struct{ descriptor, config, want string }{
		{"eu-west-1", "us-west-2", "eu-west-1"},
		{"eu-west-1", "", "eu-west-1"},
		{"", "us-west-2", "us-west-2"},
		{"", "", "us-east-1"},
	}
	for _, c := range cases {
		t.Run(c.descriptor+","+c.config, func(t *testing.T) {
			srv := startStandin(t, standin.Config{Region: c.want})
			cfg := aws.Config{Region: c.config, Credentials: aws.CredentialsProviderFunc(testCredentials)}
			d := stage.Descriptor{Version: 1, S3: &stage.S3Descriptor{
				Bucket: "lakegate", Prefix: "region", Region: c.descriptor, Endpoint: srv.URL(), PathStyle: true,
			}}
			st, err := stage.OpenS3(t.Context(), d, stage.Config{AWS: &cfg, MaxAttempts: 1})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.List(t.Context(), "", "", 0); err != nil {
				t.Fatalf("List with requests signed for the wrong region? %v", err)
			}
		})
	}
}

// openFaulty opens tenant's store on f with cfg's MaxAttempts and
// MaxBackoff (f's credentials and transport).
func openFaulty(t *testing.T, f *stagetest.Faulty, tenant string, attempts int, backoff time.Duration) *stage.S3Store {
	t.Helper()
	d, err := f.Root.ForTenant(tenant)
	if err != nil {
		t.Fatal(err)
	}
	c := f.Config
	c.MaxAttempts, c.MaxBackoff = attempts, backoff
	st, err := stage.OpenS3(t.Context(), d, c)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestS3Retries checks how often a failing request is tried: MaxAttempts
// times, 5 when it is 0.
func TestS3Retries(t *testing.T) {
	cases := []struct {
		attempts, failures int
		status             int
		ok                 bool
		sent               int
	}{
		{0, 4, http.StatusServiceUnavailable, true, 5},
		{0, 5, http.StatusInternalServerError, false, 5},
		{2, 1, http.StatusInternalServerError, true, 2},
		{2, 4, http.StatusServiceUnavailable, false, 2},
		{1, 1, http.StatusServiceUnavailable, false, 1},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("attempts=%d,failures=%d", c.attempts, c.failures), func(t *testing.T) {
			f := stagetest.FaultyS3(t)
			// A nanosecond's backoff: the count is the point, not the wait.
			st := openFaulty(t, f, "acme", c.attempts, time.Nanosecond)
			f.FailNext(stagetest.OpListObjects, c.failures, c.status)
			_, err := st.List(t.Context(), "", "", 0)
			if (err == nil) != c.ok {
				t.Errorf("List = %v, want ok=%v", err, c.ok)
			}
			if n := f.Count(stagetest.OpListObjects); n != c.sent {
				t.Errorf("List sent %d requests, want %d", n, c.sent)
			}
		})
	}
}

// TestS3RetryBackoffCap checks the cap on the (jittered) delay between
// attempts: MaxBackoff, 2s when it is 0. Delays are drawn uniformly below
// the cap, so of 200 draws none exceeds it and one exceeds half of it
// (all 200 below half: probability 2^-200).
func TestS3RetryBackoffCap(t *testing.T) {
	f := stagetest.FaultyS3(t)
	for _, c := range []struct{ set, want time.Duration }{{0, 2 * time.Second}, {500 * time.Millisecond, 500 * time.Millisecond}} {
		st := openFaulty(t, f, "acme", 0, c.set)
		var longest time.Duration
		for range 200 {
			d, err := stage.RetryDelay(st, 30)
			if err != nil {
				t.Fatal(err)
			}
			longest = max(longest, d)
		}
		if longest > c.want || longest <= c.want/2 {
			t.Errorf("MaxBackoff %v: longest of 200 delays %v, want in (%v, %v]", c.set, longest, c.want/2, c.want)
		}
	}
}

// TestS3MultipartDeclaredSize checks a body over PartSize against the size
// declared for it, zero included: a mismatch stores nothing.
func TestS3MultipartDeclaredSize(t *testing.T) {
	st := stagetest.S3(t).Open(t, "acme")
	data := pattern(stage.PartSize + 1)
	cases := []struct {
		size int64
		err  error
	}{
		{0, stage.ErrSize},
		{stage.PartSize, stage.ErrSize},
		{stage.PartSize + 2, stage.ErrSize},
		{stage.PartSize + 1, nil},
		{-1, nil},
	}
	for i, c := range cases {
		key := fmt.Sprintf("big/%d", i)
		if _, err := st.Put(t.Context(), key, bytes.NewReader(data), c.size); !errors.Is(err, c.err) {
			t.Errorf("Put of %d bytes declared %d: %v, want %v", len(data), c.size, err, c.err)
		}
		_, err := st.Stat(t.Context(), key)
		if stored := err == nil; stored != (c.err == nil) {
			t.Errorf("declared %d: stored=%v (%v)", c.size, stored, err)
		}
	}
}

// TestS3MultipartAbortFailure checks that a failed multipart upload whose
// abort fails too reports both, and that a successful abort adds nothing
// to the error.
func TestS3MultipartAbortFailure(t *testing.T) {
	for _, abortFails := range []bool{false, true} {
		t.Run(fmt.Sprintf("abort fails=%v", abortFails), func(t *testing.T) {
			f := stagetest.FaultyS3(t)
			st := openFaulty(t, f, "acme", 1, time.Nanosecond)
			if abortFails {
				f.FailNext(stagetest.OpAbortUpload, 1, http.StatusInternalServerError)
			}
			// The reader fails once the first part is uploaded.
			r := &interrupt{r: bytes.NewReader(pattern(stage.PartSize + 2)), after: stage.PartSize + 1}
			_, err := st.Put(t.Context(), "big/k", r, -1)
			if !errors.Is(err, errReader) {
				t.Fatalf("Put = %v, want the reader's error", err)
			}
			if n := f.Count(stagetest.OpAbortUpload); n != 1 {
				t.Fatalf("%d aborts sent, want 1", n)
			}
			mentioned := strings.Contains(err.Error(), "abort multipart upload") && strings.Contains(err.Error(), "InternalError")
			if mentioned != abortFails {
				t.Errorf("abort failed=%v, but the error is %q", abortFails, err)
			}
		})
	}
}

// foreign returns an edit adding keys a misbehaving server should not
// answer for tenant a's stage: other tenants', outside the stage root,
// not a valid key, and one inside a's stage (rel "e/9" for objects,
// "v/9" for uploads).
func foreign(f *stagetest.Faulty, inStage string) func(*stagetest.Listing) {
	return func(l *stagetest.Listing) {
		for _, k := range []string{
			f.Abs("tenants/b/d/1"), f.Abs("tenants/ab/d/1"), f.Abs("tenants/a"), f.Abs("d/1"),
			"elsewhere/d/1", f.Abs("tenants/a/d/.hidden"), f.Abs("tenants/a/d//2"), f.Abs("tenants/a/" + inStage),
		} {
			l.Keys = append(l.Keys, k)
			l.UploadIDs = append(l.UploadIDs, "id-"+k)
		}
	}
}

// TestS3ListDropsForeignKeys checks that List keeps, of the keys a server
// answers, only those inside the stage and under the prefix asked for, and
// no more than limit of them.
func TestS3ListDropsForeignKeys(t *testing.T) {
	f := stagetest.FaultyS3(t)
	st := f.Open(t, "a")
	for _, k := range []string{"d/1", "d/2", "e/1"} {
		if _, err := st.Put(t.Context(), k, strings.NewReader("x"), 1); err != nil {
			t.Fatal(err)
		}
	}
	f.EditListings(foreign(f, "e/9"))
	cases := []struct {
		prefix string
		limit  int
		want   []string
	}{
		{"", 0, []string{"d/1", "d/2", "e/1", "e/9"}},
		{"d/", 0, []string{"d/1", "d/2"}},
		{"", 2, []string{"d/1", "d/2"}},
	}
	for _, c := range cases {
		keys, err := st.List(t.Context(), c.prefix, "", c.limit)
		if err != nil || !slices.Equal(keys, c.want) {
			t.Errorf("List(%q, limit %d) = %q, %v; want %q", c.prefix, c.limit, keys, err, c.want)
		}
	}
}

// TestS3ListUploadsDropsForeignUploads is TestS3ListDropsForeignKeys for
// ListUploads.
func TestS3ListUploadsDropsForeignUploads(t *testing.T) {
	f := stagetest.FaultyS3(t)
	up := f.Open(t, "a").(stage.Uploads)
	id := f.StartUpload(t, "tenants/a/u/1")
	f.StartUpload(t, "tenants/b/u/1")
	f.EditListings(foreign(f, "v/9"))
	cases := []struct {
		prefix string
		want   []string
	}{
		{"", []string{"u/1", "v/9"}},
		{"u/", []string{"u/1"}},
	}
	for _, c := range cases {
		ups, err := up.ListUploads(t.Context(), c.prefix)
		var keys []string
		for _, u := range ups {
			keys = append(keys, u.Key)
		}
		if err != nil || !slices.Equal(keys, c.want) || ups[0].ID != id { // keys equal: ups is not empty
			t.Errorf("ListUploads(%q) = %+v, %v; want keys %q, the first with id %s", c.prefix, ups, err, c.want, id)
		}
	}
}

// TestS3ListPages checks that List and ListUploads follow a server's
// pages to the end (the server answers two entries a page, whatever is
// asked), that List stops asking once it holds limit keys, and that an
// answer that ends the listing inconsistently (truncated without a token or
// marker, or not truncated but with one) ends it: no request follows.
func TestS3ListPages(t *testing.T) {
	stop := map[string]func(l *stagetest.Listing){
		"":                       nil,
		"truncated without next": func(l *stagetest.Listing) { l.Truncated, l.Next, l.NextUploadID = true, "", "" },
		"complete with next":     func(l *stagetest.Listing) { l.Truncated = false },
	}
	cases := []struct {
		stop    string
		limit   int
		want    []string
		objects int // ListObjectsV2 requests
		uploads int // ListMultipartUploads requests
	}{
		{"", 0, []string{"k/1", "k/2", "k/3", "k/4", "k/5"}, 3, 3},
		{"", 3, []string{"k/1", "k/2", "k/3"}, 2, 3},
		{"", 4, []string{"k/1", "k/2", "k/3", "k/4"}, 2, 3},
		{"truncated without next", 0, []string{"k/1", "k/2"}, 1, 1},
		{"complete with next", 0, []string{"k/1", "k/2"}, 1, 1},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s limit=%d", c.stop, c.limit), func(t *testing.T) {
			f := stagetest.FaultyS3(t)
			st := f.Open(t, "a")
			for _, k := range []string{"k/1", "k/2", "k/3", "k/4", "k/5"} {
				if _, err := st.Put(t.Context(), k, strings.NewReader("x"), 1); err != nil {
					t.Fatal(err)
				}
				f.StartUpload(t, "tenants/a/"+k)
			}
			f.PageSize(2)
			answered := map[string]int{}
			f.EditListings(func(l *stagetest.Listing) {
				answered[l.Op]++
				if edit := stop[c.stop]; edit != nil {
					if answered[l.Op] > 1 {
						// A request after the inconsistent answer: empty, so
						// that following on ends (and shows in the count).
						l.Keys, l.UploadIDs, l.Truncated, l.Next, l.NextUploadID = nil, nil, false, "", ""
						return
					}
					edit(l)
				}
			})
			keys, err := st.List(t.Context(), "", "", c.limit)
			if err != nil || !slices.Equal(keys, c.want) {
				t.Errorf("List(limit %d) = %q, %v; want %q", c.limit, keys, err, c.want)
			}
			if n := f.Count(stagetest.OpListObjects); n != c.objects {
				t.Errorf("List sent %d requests, want %d", n, c.objects)
			}
			if c.limit != 0 {
				return // ListUploads has no limit
			}
			ups, err := st.(stage.Uploads).ListUploads(t.Context(), "")
			var upKeys []string
			for _, u := range ups {
				upKeys = append(upKeys, u.Key)
			}
			if err != nil || !slices.Equal(upKeys, c.want) {
				t.Errorf("ListUploads = %q, %v; want %q", upKeys, err, c.want)
			}
			if n := f.Count(stagetest.OpListUploads); n != c.uploads {
				t.Errorf("ListUploads sent %d requests, want %d", n, c.uploads)
			}
		})
	}
}
