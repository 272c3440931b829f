package flight

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"lakegate/flight/backend"
	"lakegate/flight/ipccheck/ipctest"
)

// TestMalformedIPCRefused: an authenticated client's ingest stream that
// would make arrow-go's reader allocate beyond memory — a schema message
// claiming hundreds of millions of fields in 120 bytes (found by
// FuzzIngestIPC), a compressed buffer announcing 64 GiB — is refused with
// InvalidArgument, and the server keeps serving. Without the check the
// runtime ends the process: this test dies with "out of memory".
func TestMalformedIPCRefused(t *testing.T) {
	// The target exists, so the ingest reads the stream.
	cl, _ := servedLogging(t, &metricsCatalog{visible: map[backend.TableName]bool{{Schema: "sales", Name: "t"}: true},
		columns: []backend.Column{{Name: "id", Type: "BIGINT"}}})
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+aliceToken)
	desc := &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: anyOf(t, &pb.CommandStatementIngest{Table: "t", Schema: ptrTo("sales"),
		TableDefinitionOptions: &pb.CommandStatementIngest_TableDefinitionOptions{IfExists: pb.CommandStatementIngest_TableDefinitionOptions_TABLE_EXISTS_OPTION_APPEND}})}
	for name, stream := range map[string][]byte{"huge fields vector": ipctest.HugeFields(), "compression bomb": ipctest.CompressionBomb(t)} {
		for i := range 2 { // the server is still there for the second
			put, err := cl.Client.DoPut(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for j, m := range ipctest.Messages(stream) {
				fd := &flight.FlightData{DataHeader: m.Meta, DataBody: m.Body}
				if j == 0 {
					fd.FlightDescriptor = desc
				}
				if err := put.Send(fd); err != nil {
					break // the server may have refused already
				}
			}
			_ = put.CloseSend()
			// An empty PutResult may come before the error.
			for err == nil {
				_, err = put.Recv()
			}
			if status.Code(err) != codes.InvalidArgument {
				t.Fatalf("%s, call %d: %v, want InvalidArgument", name, i, err)
			}
		}
	}
}

// TestMalformedParameter: a parameter array whose validity bitmap is
// shorter than the array (arrow-go does not check it on read) is an error,
// not a panic.
func TestMalformedParameter(t *testing.T) {
	data := array.NewData(arrow.PrimitiveTypes.Int64, 20,
		[]*memory.Buffer{memory.NewBufferBytes([]byte{0xff}), memory.NewBufferBytes(make([]byte, 160))}, nil, 0, 0)
	defer data.Release()
	col := array.MakeFromData(data)
	defer col.Release()
	if v, err := scalarAt(col, 15); err == nil {
		t.Fatalf("scalarAt = %v, want an error", v)
	}
}
