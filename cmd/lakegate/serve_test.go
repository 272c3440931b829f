package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeWithoutS3Credentials: serve over an S3 stage with no AWS
// credentials anywhere fails at start with one line naming what to set,
// and leaves no data directory behind.
func TestServeWithoutS3Credentials(t *testing.T) {
	dir := t.TempDir()
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE",
		"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI"} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "no-config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "no-credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	desc := filepath.Join(dir, "stage.json")
	if err := os.WriteFile(desc, []byte(`{"version":1,"s3":{"bucket":"lake","prefix":"prod","region":"us-east-1","endpoint":"http://127.0.0.1:1"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"serve", "--data-dir", data, "--stage", desc,
		"--flight-addr", "127.0.0.1:0", "--metasrv-addr", "127.0.0.1:0", "--raft-addr", "127.0.0.1:0", "--metrics-addr", ""}, &out, &errOut)
	if err == nil {
		t.Fatal("serve started without credentials")
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "no AWS credentials") || !strings.Contains(msg, "AWS_ACCESS_KEY_ID") {
		t.Errorf("error %q: want one line naming the credentials to set", msg)
	}
	if _, err := os.Lstat(data); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("data directory left behind after a failed first start: %v", err)
	}
	if strings.Contains(errOut.String(), "WARN") || strings.Contains(errOut.String(), "ERROR") {
		t.Errorf("log:\n%s", errOut.String())
	}
}
