package upstream

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"

	"lakegate/flight/ipccheck"
)

// An engine is reached only through the operator's allow list, but what it
// sends is still parsed by arrow-go, which sizes allocations from lengths
// in the Arrow IPC metadata: one malformed schema could make it ask for
// more memory than the machine has and end the gateway. Every schema and
// streamed message an engine sends is checked first (flight/ipccheck).

// deserializeSchema is flight.DeserializeSchema of a checked schema.
func deserializeSchema(b []byte, mem memory.Allocator) (*arrow.Schema, error) {
	if err := ipccheck.Stream(b); err != nil {
		return nil, err
	}
	return flight.DeserializeSchema(b, mem)
}

// checkIPCStream checks the IPC metadata of every FlightData an engine
// streams before the reader sees it.
func checkIPCStream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	cs, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil {
		return nil, err
	}
	return ipcCheckedStream{cs}, nil
}

type ipcCheckedStream struct{ grpc.ClientStream }

func (s ipcCheckedStream) RecvMsg(m any) error {
	if err := s.ClientStream.RecvMsg(m); err != nil {
		return err
	}
	if fd, ok := m.(*flight.FlightData); ok {
		return ipccheck.FlightData(fd.DataHeader, fd.DataBody)
	}
	return nil
}
