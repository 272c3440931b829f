package standin_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"lakegate/localstack/standin"
)

// TestFailRequests: the requests FailRequests selects (here: writes) are
// answered 503 ServiceUnavailable and logged so, the others are served,
// and FailRequests(nil) restores service.
func TestFailRequests(t *testing.T) {
	srv := start(t)
	ctx := t.Context()
	c := client(srv, "test", "test", "us-east-1")
	put := func(key string) error {
		_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("lake"), Key: aws.String(key), Body: bytes.NewReader([]byte("x"))})
		return err
	}
	get := func(key string) error {
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("lake"), Key: aws.String(key)})
		if err == nil {
			_, _ = io.Copy(io.Discard, out.Body)
			out.Body.Close()
		}
		return err
	}
	if err := put("a"); err != nil {
		t.Fatal(err)
	}
	srv.FailRequests(func(r standin.Request) bool { return r.Method != http.MethodGet && r.Method != http.MethodHead })
	if err := put("b"); code(err) != "ServiceUnavailable" {
		t.Fatalf("a write while failing: %v, want ServiceUnavailable", err)
	}
	if err := get("a"); err != nil {
		t.Fatalf("a read while writes fail: %v", err)
	}
	if reqs := srv.Requests(); reqs[len(reqs)-2].Status != http.StatusServiceUnavailable || reqs[len(reqs)-2].Key() != "b" {
		t.Fatalf("the failed write is logged as %+v", reqs[len(reqs)-2])
	}
	srv.FailRequests(nil)
	if err := put("b"); err != nil {
		t.Fatalf("a write once restored: %v", err)
	}
	if err := get("b"); err != nil {
		t.Fatal(err)
	}
}
