package stagetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/xml"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"lakegate/localstack/standin"
	"lakegate/stage"
)

// Backend is one backend under test: a shared stage root (a directory or a
// bucket prefix) that tenants' child stages live under, plus the unchecked
// access the controls need.
type Backend struct {
	Name string
	// Root is the shared (parent) stage descriptor.
	Root stage.Descriptor
	// OpenDescriptor opens any descriptor of this backend with the
	// backend's credentials and (recorded) transport, as an SDK user would.
	OpenDescriptor func(t *testing.T, d stage.Descriptor) stage.Store
	// Config is what OpenDescriptor opens stores with (credentials and the
	// recorded transport), for code under test that opens its own.
	Config stage.Config

	// Sent returns every storage request that left the process so far
	// through the stores' HTTP clients (nil: the backend makes none).
	Sent func() []Request
	// Received returns every request the server received so far (nil: no
	// server log, e.g. LocalStack).
	Received func() []Request
	// Abs maps a key relative to Root to the key requests name.
	Abs func(rel string) string

	// RawGet reads a key relative to Root with no containment check (local:
	// filepath.Join and os.ReadFile; S3: a plain SDK client with the same
	// credentials). Controls use it to show an escape would be real.
	RawGet func(t *testing.T, rel string) ([]byte, bool)
	// RawList lists keys relative to Root starting with prefix, unchecked.
	RawList func(t *testing.T, prefix string) []string
	// Symlink plants a symbolic link (local only; nil elsewhere): link and
	// target are relative to Root.
	Symlink func(t *testing.T, link, target string)
	// RawPut writes an object at a key relative to Root with the given
	// user metadata, bypassing the stage layer (S3 only; nil elsewhere).
	RawPut func(t *testing.T, rel string, data []byte, meta map[string]string)
	// StartUpload opens a multipart upload at a key relative to Root and
	// returns its id (S3 only; nil elsewhere).
	StartUpload func(t *testing.T, rel string) string
}

// Open returns tenant's child store; every tenant shares b.Root.
func (b *Backend) Open(t *testing.T, tenant string) stage.Store {
	t.Helper()
	c, err := b.Root.ForTenant(tenant)
	if err != nil {
		t.Fatal(err)
	}
	return b.OpenDescriptor(t, c)
}

// Request is an observed storage request: its method and every object key
// or prefix it names, as absolute (bucket) keys. A request that names no
// key (a bucket-wide list, say) names "".
type Request struct {
	Method string
	Keys   []string
}

// Local returns a Backend on a fresh temporary directory.
func Local(t *testing.T) *Backend {
	root := t.TempDir()
	d := stage.Descriptor{Version: 1, Local: &stage.LocalDescriptor{Root: root}}
	return &Backend{
		Name: "local",
		Root: d,
		OpenDescriptor: func(t *testing.T, c stage.Descriptor) stage.Store {
			t.Helper()
			st, err := stage.OpenLocal(c)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			return st
		},
		Abs: func(rel string) string { return filepath.Join(root, rel) },
		RawGet: func(t *testing.T, rel string) ([]byte, bool) {
			b, err := os.ReadFile(filepath.Join(root, rel))
			return b, err == nil
		},
		RawList: func(t *testing.T, prefix string) []string {
			var keys []string
			_ = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
				if err == nil && e.Type().IsRegular() {
					r, _ := filepath.Rel(root, p)
					if r = filepath.ToSlash(r); strings.HasPrefix(r, prefix) {
						keys = append(keys, r)
					}
				}
				return nil
			})
			return keys
		},
		Symlink: func(t *testing.T, link, target string) {
			t.Helper()
			l := filepath.Join(root, link)
			if err := os.MkdirAll(filepath.Dir(l), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(root, target), l); err != nil {
				t.Fatal(err)
			}
		},
	}
}

// S3 returns a Backend on S3 under a fresh random prefix: LocalStack or AWS
// when AWS_ENDPOINT_URL is set (bucket $LAKEGATE_TEST_BUCKET, default
// "lakegate", which must exist; credentials from the SDK chain), otherwise
// an in-process stand-in on 127.0.0.1:0 with credentials test/test.
// Region us-east-1 and path-style either way. Every store's HTTP client
// records its requests (Sent); with the stand-in, its log is Received.
func S3(t *testing.T) *Backend {
	t.Helper()
	ctx := t.Context()
	bucket := "lakegate"
	var (
		endpoint = os.Getenv("AWS_ENDPOINT_URL")
		cfg      aws.Config
		received func() []Request
	)
	if endpoint != "" {
		if b := os.Getenv("LAKEGATE_TEST_BUCKET"); b != "" {
			bucket = b
		}
		var err error
		if cfg, err = config.LoadDefaultConfig(ctx, config.WithRegion("us-east-1")); err != nil {
			t.Fatal(err)
		}
	} else {
		srv, err := standin.Start(context.WithoutCancel(ctx), standin.Config{Buckets: []string{bucket}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Close() })
		endpoint = srv.URL()
		cfg = standinConfig()
		received = func() []Request {
			var out []Request
			for _, r := range srv.Requests() {
				out = append(out, fromStandin(bucket, r))
			}
			return out
		}
	}
	return s3Backend(t, bucket, endpoint, cfg, received)
}

// standinConfig is the SDK configuration for the stand-in's defaults.
func standinConfig() aws.Config {
	return aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}
}

// s3Backend is the S3 Backend on bucket at endpoint under a fresh random
// prefix; received is the server's log (nil: none).
func s3Backend(t *testing.T, bucket, endpoint string, cfg aws.Config, received func() []Request) *Backend {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	prefix := "stagetest-" + hex.EncodeToString(rnd[:])
	d := stage.Descriptor{Version: 1, S3: &stage.S3Descriptor{
		Bucket: bucket, Prefix: prefix, Region: "us-east-1", Endpoint: endpoint, PathStyle: true,
	}}
	rec := &Recorder{Bucket: bucket, Next: http.DefaultTransport}
	raw := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.BaseEndpoint, o.UsePathStyle, o.Region = aws.String(endpoint), true, "us-east-1"
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	abs := func(rel string) string { return prefix + "/" + rel }
	stageCfg := stage.Config{AWS: &cfg, HTTPClient: &http.Client{Transport: rec}}
	return &Backend{
		Name:   "s3",
		Root:   d,
		Config: stageCfg,
		OpenDescriptor: func(t *testing.T, c stage.Descriptor) stage.Store {
			t.Helper()
			st, err := stage.OpenS3(t.Context(), c, stageCfg)
			if err != nil {
				t.Fatal(err)
			}
			return st
		},
		Sent:     rec.Requests,
		Received: received,
		Abs:      abs,
		RawGet: func(t *testing.T, rel string) ([]byte, bool) {
			out, err := raw.GetObject(t.Context(), &s3.GetObjectInput{Bucket: &bucket, Key: aws.String(abs(rel))})
			if err != nil {
				return nil, false
			}
			defer out.Body.Close()
			b, err := io.ReadAll(out.Body)
			return b, err == nil
		},
		RawList: func(t *testing.T, p string) []string {
			out, err := raw.ListObjectsV2(t.Context(), &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: aws.String(abs(p))})
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, o := range out.Contents {
				keys = append(keys, strings.TrimPrefix(aws.ToString(o.Key), prefix+"/"))
			}
			return keys
		},
		RawPut: func(t *testing.T, rel string, data []byte, meta map[string]string) {
			if _, err := raw.PutObject(t.Context(), &s3.PutObjectInput{
				Bucket: &bucket, Key: aws.String(abs(rel)), Body: bytes.NewReader(data), Metadata: meta,
			}); err != nil {
				t.Fatal(err)
			}
		},
		StartUpload: func(t *testing.T, rel string) string {
			out, err := raw.CreateMultipartUpload(t.Context(), &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: aws.String(abs(rel))})
			if err != nil {
				t.Fatal(err)
			}
			return aws.ToString(out.UploadId)
		},
	}
}

// Recorder is an http.RoundTripper that records, for every request, the
// keys it names (object key, list prefix and start-after, copy source,
// multi-delete keys) before passing it to Next.
type Recorder struct {
	Bucket string
	Next   http.RoundTripper

	mu  sync.Mutex
	log []Request
}

// RoundTrip implements http.RoundTripper.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	obs := Request{Method: req.Method}
	q := req.URL.Query()
	var body []byte
	if _, ok := q["delete"]; ok && req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		req.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	obs.Keys = names(r.Bucket, req.URL.Path, q, req.Header.Get("X-Amz-Copy-Source"), deleteKeys(body))
	r.mu.Lock()
	r.log = append(r.log, obs)
	r.mu.Unlock()
	return r.Next.RoundTrip(req)
}

// Requests returns a copy of the log.
func (r *Recorder) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.log...)
}

func deleteKeys(body []byte) []string {
	if len(body) == 0 {
		return nil
	}
	var del struct {
		Objects []struct{ Key string } `xml:"Object"`
	}
	_ = xml.Unmarshal(body, &del)
	var keys []string
	for _, o := range del.Objects {
		keys = append(keys, o.Key)
	}
	return keys
}

func fromStandin(bucket string, r standin.Request) Request {
	cs := ""
	if r.CopySource != "" {
		cs = url.PathEscape(r.CopySource) // names() unescapes
	}
	return Request{Method: r.Method, Keys: names(bucket, r.Path, r.Query, cs, r.DeleteKeys)}
}

// names lists the absolute keys a request names.
func names(bucket, path string, q url.Values, copySource string, del []string) []string {
	var keys []string
	key, _ := strings.CutPrefix(path, "/"+bucket)
	key = strings.TrimPrefix(key, "/")
	if key != "" {
		keys = append(keys, key)
	}
	for _, p := range []string{"prefix", "start-after", "key-marker"} {
		if v, ok := q[p]; ok {
			keys = append(keys, v...)
		}
	}
	if copySource != "" {
		src, err := url.PathUnescape(copySource)
		if err != nil {
			src = copySource
		}
		src = strings.TrimPrefix(src, "/")
		src, _ = strings.CutPrefix(src, bucket+"/")
		keys = append(keys, src)
	}
	keys = append(keys, del...)
	if _, ok := q["delete"]; ok && len(del) == 0 {
		keys = append(keys, "") // a delete whose keys we could not see
	}
	if len(keys) == 0 {
		keys = []string{""}
	}
	return keys
}

// outside returns the requests in reqs naming any key not under prefix.
func outside(reqs []Request, prefix string) []Request {
	var bad []Request
	for _, r := range reqs {
		for _, k := range r.Keys {
			if !strings.HasPrefix(k, prefix) {
				bad = append(bad, r)
				break
			}
		}
	}
	return bad
}

func readAll(ctx context.Context, st stage.Store, key string) ([]byte, error) {
	rc, _, err := st.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	var b bytes.Buffer
	_, err = b.ReadFrom(rc)
	return b.Bytes(), err
}
