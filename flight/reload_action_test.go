package flight

import (
	"errors"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"lakegate/authz"
)

// TestReloadPrincipalsAction: only a platform operator reloads the map
// through the action; anyone else gets the answer of an action the server
// does not have; a refused reload says why and keeps the map in force.
func TestReloadPrincipalsAction(t *testing.T) {
	var reloadErr error
	calls := 0
	l := newLake(t, func(c *Config) {
		c.ReloadPrincipals = func(string) error { calls++; return reloadErr }
	})
	cl := l.client(t)
	do := func(token string) (string, error) {
		stream, err := cl.Client.DoAction(bearerCtx(token), &flight.Action{Type: ReloadPrincipalsActionType})
		if err != nil {
			return "", err
		}
		res, err := stream.Recv()
		if err != nil {
			return "", err
		}
		if _, err := stream.Recv(); !errors.Is(err, io.EOF) {
			return "", err
		}
		return string(res.GetBody()), nil
	}
	s, unknown := cl.Client.DoAction(bearerCtx(aliceToken), &flight.Action{Type: "lakegate.no.such.action"})
	if unknown == nil {
		_, unknown = s.Recv()
	}
	_, userErr := do(aliceToken)
	if status.Code(userErr) != status.Code(unknown) || status.Code(userErr) == codes.OK || calls != 0 {
		t.Errorf("a user's reload: %v (an unknown action: %v), %d reloads", userErr, unknown, calls)
	}
	body, err := do(oscarToken)
	if err != nil || body != `{"generation":1}` || calls != 1 {
		t.Errorf("the operator's reload: %q, %v, %d reloads", body, err, calls)
	}
	reloadErr = errors.New("authz: reload refused, the previous principal map stays in force: bad role")
	_, err = do(oscarToken)
	checkStatus(t, err, codes.InvalidArgument, "previous principal map stays in force")
}

// TestMetricsShareAuthnFailures: a registry that already counts
// authentication failures (serve's, where metasrv registered first) gets
// no second counter; both count into the one there.
func TestMetricsShareAuthnFailures(t *testing.T) {
	reg := prometheus.NewRegistry()
	first := NewMetrics(nil).authn
	reg.MustRegister(first)
	m := NewMetrics(reg)
	m.authnFailed(authz.ReasonExpired)
	if got := testutil.ToFloat64(first.WithLabelValues("expired")); got != 1 {
		t.Errorf("the registered counter counted %v, want 1", got)
	}
}
