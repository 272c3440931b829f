package flight

import (
	"context"
	"encoding/binary"
	"os"
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
)

// TestMalformedIPCRefused: an authenticated client's ingest whose schema
// message claims hundreds of millions of fields in 120 bytes (found by
// FuzzIngestIPC) is refused with InvalidArgument, and the server keeps
// serving. Without the check arrow-go's reader asks for 29 GB and the
// runtime ends the process: this test dies with "out of memory".
func TestMalformedIPCRefused(t *testing.T) {
	stream, err := os.ReadFile("testdata/huge-fields.arrows")
	if err != nil {
		t.Fatal(err)
	}
	meta := stream[8 : 8+binary.LittleEndian.Uint32(stream[4:])]
	// The target exists, so the ingest reads the stream's schema.
	cl, _ := servedLogging(t, &metricsCatalog{visible: map[backend.TableName]bool{{Schema: "sales", Name: "t"}: true}})
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+aliceToken)
	for i := range 2 { // the server is still there for the second
		put, err := cl.Client.DoPut(ctx)
		if err != nil {
			t.Fatal(err)
		}
		desc := &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: anyOf(t, &pb.CommandStatementIngest{Table: "t", Schema: ptrTo("sales"),
			TableDefinitionOptions: &pb.CommandStatementIngest_TableDefinitionOptions{IfExists: pb.CommandStatementIngest_TableDefinitionOptions_TABLE_EXISTS_OPTION_APPEND}})}
		if err := put.Send(&flight.FlightData{FlightDescriptor: desc, DataHeader: meta}); err != nil {
			t.Fatal(err)
		}
		_ = put.CloseSend()
		_, err = put.Recv()
		if status.Code(err) != codes.InvalidArgument {
			t.Fatalf("call %d: %v, want InvalidArgument", i, err)
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
