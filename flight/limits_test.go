package flight

import (
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// TestConnectionLimits: the server announces its per-connection stream and
// header limits in its first HTTP/2 SETTINGS frame, so a client cannot open
// unbounded calls or send unbounded metadata on one connection.
func TestConnectionLimits(t *testing.T) {
	s, _ := newTestServer(t, &metricsCatalog{}, nil)
	addr := serveLoopback(t, s)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		sf, ok := f.(*http2.SettingsFrame)
		if !ok || sf.IsAck() {
			continue
		}
		want := map[http2.SettingID]uint32{
			http2.SettingMaxConcurrentStreams: MaxStreamsPerConn,
			http2.SettingMaxHeaderListSize:    MaxHeaderBytes,
		}
		for id, v := range want {
			if got, ok := sf.Value(id); !ok || got != v {
				t.Errorf("%v = %d (sent %v), want %d", id, got, ok, v)
			}
		}
		return
	}
}
