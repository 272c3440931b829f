package standin_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	smithy "github.com/aws/smithy-go"

	"lakegate/localstack/standin"
)

func start(t *testing.T) *standin.Server {
	t.Helper()
	srv, err := standin.Start(t.Context(), standin.Config{Buckets: []string{"lake"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

func client(srv *standin.Server, akid, secret, region string) *s3.Client {
	return s3.New(s3.Options{
		Region:                     region,
		BaseEndpoint:               aws.String(srv.URL()),
		UsePathStyle:               true,
		Credentials:                credentials.NewStaticCredentialsProvider(akid, secret, ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
		RetryMaxAttempts:           1,
	})
}

func code(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

func TestSDKSignedRequests(t *testing.T) {
	srv := start(t)
	ctx := t.Context()
	good := client(srv, "test", "test", "us-east-1")
	body := []byte("hello, stand-in")
	put := func(c *s3.Client, key string) error {
		_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("lake"), Key: aws.String(key), Body: bytes.NewReader(body)})
		return err
	}
	cases := []struct {
		name   string
		client *s3.Client
		want   string // error code, "" for success
	}{
		{"valid", good, ""},
		{"wrong secret", client(srv, "test", "nope", "us-east-1"), "SignatureDoesNotMatch"},
		{"unknown access key", client(srv, "other", "test", "us-east-1"), "SignatureDoesNotMatch"},
		{"wrong region", client(srv, "test", "test", "eu-west-1"), "SignatureDoesNotMatch"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := code(put(c.client, "k/"+strings.ReplaceAll(c.name, " ", "-"))); got != c.want {
				t.Fatalf("put: got %q, want %q", got, c.want)
			}
		})
	}
	out, err := good.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("lake"), Key: aws.String("k/valid")})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(out.Body)
	out.Body.Close()
	if !bytes.Equal(got, body) {
		t.Fatalf("get: %q", got)
	}
	// Keys needing escapes and query parameters needing escapes.
	if err := put(good, "a b/c+d=e~f"); err != nil {
		t.Fatal(err)
	}
	lo, err := good.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("lake"), Prefix: aws.String("a b/c+"), StartAfter: aws.String("a b/")})
	if err != nil || len(lo.Contents) != 1 {
		t.Fatalf("list: %v %v", lo, err)
	}
	log := srv.Requests()
	if len(log) == 0 || log[0].Method != http.MethodPut || log[0].Path != "/lake/k/valid" || log[0].Status != http.StatusOK {
		t.Fatalf("log[0] = %+v", log[0])
	}
	for _, r := range log[1:4] {
		if r.Status != http.StatusForbidden {
			t.Errorf("rejected request logged with status %d: %+v", r.Status, r)
		}
	}
	if q := log[len(log)-1].Query.Get("prefix"); q != "a b/c+" {
		t.Errorf("logged prefix %q", q)
	}
}

func TestPresigned(t *testing.T) {
	srv := start(t)
	ctx := t.Context()
	good := client(srv, "test", "test", "us-east-1")
	if _, err := good.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("lake"), Key: aws.String("p/obj"), Body: strings.NewReader("presigned")}); err != nil {
		t.Fatal(err)
	}
	presign := func(c *s3.Client, expires time.Duration) string {
		req, err := s3.NewPresignClient(c, s3.WithPresignExpires(expires)).PresignGetObject(ctx,
			&s3.GetObjectInput{Bucket: aws.String("lake"), Key: aws.String("p/obj")})
		if err != nil {
			t.Fatal(err)
		}
		return req.URL
	}
	valid := presign(good, time.Minute)
	cases := []struct {
		name string
		url  string
		want int
	}{
		{"valid", valid, http.StatusOK},
		{"wrong secret", presign(client(srv, "test", "nope", "us-east-1"), time.Minute), http.StatusForbidden},
		{"tampered key", strings.Replace(valid, "/p/obj", "/p/obk", 1), http.StatusForbidden},
		{"signature stripped", strings.Split(valid, "&X-Amz-Signature=")[0], http.StatusForbidden},
		{"unsigned", srv.URL() + "/lake/p/obj", http.StatusForbidden},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, err := http.Get(c.url)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.want {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.want, b)
			}
			if c.want == http.StatusOK && string(b) != "presigned" {
				t.Fatalf("body %q", b)
			}
		})
	}
}

func TestExpiredPresign(t *testing.T) {
	now := time.Now()
	srv, err := standin.Start(t.Context(), standin.Config{Buckets: []string{"lake"}, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	c := client(srv, "test", "test", "us-east-1")
	req, err := s3.NewPresignClient(c, s3.WithPresignExpires(time.Minute)).PresignGetObject(t.Context(),
		&s3.GetObjectInput{Bucket: aws.String("lake"), Key: aws.String("x")})
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute)
	resp, err := http.Get(req.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("expired presigned URL: status %d", resp.StatusCode)
	}
}

// tamper is a transport that changes a signed request after signing.
type tamper func(*http.Request)

func (f tamper) RoundTrip(r *http.Request) (*http.Response, error) {
	f(r)
	return http.DefaultTransport.RoundTrip(r)
}

func TestTamperedRequests(t *testing.T) {
	srv := start(t)
	cases := []struct {
		name string
		f    func(*http.Request)
		want string
	}{
		{"body changed", func(r *http.Request) {
			r.Body = io.NopCloser(strings.NewReader("HELLO"))
		}, "XAmzContentSHA256Mismatch"},
		{"unsigned x-amz header added", func(r *http.Request) {
			r.Header.Set("X-Amz-Copy-Source", "/lake/secret")
		}, "SignatureDoesNotMatch"},
		{"signed header changed", func(r *http.Request) {
			r.Header.Set("X-Amz-Date", time.Now().Add(time.Second).UTC().Format("20060102T150405Z"))
		}, "SignatureDoesNotMatch"},
		{"authorization removed", func(r *http.Request) { r.Header.Del("Authorization") }, "AccessDenied"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl := s3.New(s3.Options{
				Region: "us-east-1", BaseEndpoint: aws.String(srv.URL()), UsePathStyle: true,
				Credentials:                credentials.NewStaticCredentialsProvider("test", "test", ""),
				RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
				RetryMaxAttempts:           1,
				HTTPClient:                 &http.Client{Transport: tamper(c.f)},
			})
			_, err := cl.PutObject(context.Background(), &s3.PutObjectInput{
				Bucket: aws.String("lake"), Key: aws.String("t/obj"), Body: strings.NewReader("hello"),
			})
			if got := code(err); got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}
