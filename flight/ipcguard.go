package flight

import (
	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"lakegate/flight/ipccheck"
)

// errMalformedIPC is what a client gets for Arrow IPC metadata ipccheck
// refuses.
var errMalformedIPC = status.Error(codes.InvalidArgument, "malformed Arrow IPC message")

// checkIPCStream checks the Arrow IPC metadata of every message a client
// streams (DoPut: parameters, ingest, updates) before arrow-go's reader
// parses it: the reader sizes allocations from lengths in the metadata, and
// a few hundred bytes could make it allocate more memory than the machine
// has, which ends the process (see flight/ipccheck).
func checkIPCStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	return handler(srv, ipcCheckedStream{ss})
}

type ipcCheckedStream struct{ grpc.ServerStream }

func (s ipcCheckedStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	if fd, ok := m.(*flight.FlightData); ok && ipccheck.FlightData(fd.DataHeader, fd.DataBody) != nil {
		return errMalformedIPC
	}
	return nil
}
