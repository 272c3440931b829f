package integration_test

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"lakegate/stage"
)

const stageDescribe = "lakegate.stage.describe"

// describeStage runs the stage action and returns its single result body.
func describeStage(ctx context.Context, cl flight.Client, body []byte) ([]byte, error) {
	stream, err := cl.DoAction(ctx, &flight.Action{Type: stageDescribe, Body: body})
	if err != nil {
		return nil, err
	}
	var results [][]byte
	for {
		r, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		results = append(results, r.GetBody())
	}
	if len(results) != 1 {
		return nil, status.Errorf(codes.Internal, "got %d results, want 1", len(results))
	}
	return results[0], nil
}

func TestStageDescribeAction(t *testing.T) {
	srv := startServe(t)
	conn, err := grpc.NewClient(srv.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cl := flight.NewClientFromConn(conn, nil)
	bearerCtx := func(token string) context.Context {
		return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+token)
	}
	ctx := bearerCtx(srv.token(t, "analyst@demo"))

	t.Run("returns the caller's tenant stage", func(t *testing.T) {
		body, err := describeStage(ctx, cl, nil)
		if err != nil {
			t.Fatal(err)
		}
		d, err := stage.ParseDescriptor(body)
		if err != nil {
			t.Fatalf("descriptor %s: %v", body, err)
		}
		if d.Local == nil || d.S3 != nil {
			t.Fatalf("descriptor %s: want a local stage", body)
		}
		if !strings.HasSuffix(d.Local.Root, "/tenants/demo") {
			t.Errorf("root %q does not end with /tenants/demo", d.Local.Root)
		}
		dataDir, err := filepath.Abs(srv.DataDir)
		if err != nil {
			t.Fatal(err)
		}
		if rel, err := filepath.Rel(dataDir, d.Local.Root); err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			t.Errorf("root %q is not inside the data directory %q", d.Local.Root, dataDir)
		}
		if want := filepath.Join(dataDir, "stage", "tenants", "demo"); d.Local.Root != want {
			t.Errorf("root %q, want %q", d.Local.Root, want)
		}
		// Only the documented, credential-free fields, at every level: no
		// keys, secrets, tokens or endpoints with user info can ride along.
		var top map[string]json.RawMessage
		var local map[string]json.RawMessage
		if err := json.Unmarshal(body, &top); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(top["local"], &local); err != nil {
			t.Fatal(err)
		}
		if len(top) != 2 || top["version"] == nil || len(local) != 1 || local["root"] == nil {
			t.Errorf("descriptor has fields beyond version and local.root: %s", body)
		}
	})

	t.Run("listed by ListActions", func(t *testing.T) {
		stream, err := cl.ListActions(ctx, &flight.Empty{})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for {
			a, err := stream.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			found = found || a.GetType() == stageDescribe
		}
		if !found {
			t.Errorf("ListActions does not list %s", stageDescribe)
		}
	})

	t.Run("needs a valid token", func(t *testing.T) {
		for name, c := range map[string]context.Context{
			"missing": context.Background(),
			"wrong":   bearerCtx("not-a-token"),
		} {
			if _, err := describeStage(c, cl, nil); status.Code(err) != codes.Unauthenticated {
				t.Errorf("%s token: %v, want Unauthenticated", name, err)
			}
		}
	})

	t.Run("rejects a body", func(t *testing.T) {
		if _, err := describeStage(ctx, cl, []byte(`{"tenant":"other"}`)); status.Code(err) != codes.InvalidArgument {
			t.Errorf("with a body: %v, want InvalidArgument", err)
		}
	})
}
