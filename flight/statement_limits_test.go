package flight

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"lakegate/authz/sqlgate"
	"lakegate/flight/backend"
)

// TestStatementLimitStatus: a statement over a limit — refused by the gate,
// or by the engine while it runs — is ResourceExhausted with the message
// naming the limit, whatever wraps it (a governed read's withheld message
// included); other gate errors stay InvalidArgument.
func TestStatementLimitStatus(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	_, gateErr := g.Parse("SELECT 1"+strings.Repeat(" UNION ALL SELECT 1", 1000), "")
	engineErr, ok := sqlgate.EngineLimit("Invalid Input Error: sqlgate: statement exceeds the limit of 65536 bytes for a string REPEAT builds")
	if !ok {
		t.Fatal("EngineLimit")
	}
	policy := []backend.TableVersion{{Policy: &backend.TablePolicy{}}}
	cases := []struct {
		err  error
		want string
	}{
		{gateErr, "sqlgate: statement exceeds the limit of 1000 UNION, EXCEPT and INTERSECT branches"},
		{fmt.Errorf("%w: %w", backend.ErrResources, engineErr), "sqlgate: statement exceeds the limit of 65536 bytes for a string REPEAT builds"},
		{withheld(policy, fmt.Errorf("stream: %w", fmt.Errorf("%w: %w", backend.ErrResources, engineErr))), "sqlgate: statement exceeds the limit of 65536 bytes for a string REPEAT builds"},
		{fmt.Errorf("%w: %w", backend.ErrResources, sqlgate.ParamLimit(3, 65536)), "sqlgate: statement exceeds the limit of 65536 bytes for a string (parameter 3)"},
	}
	for _, c := range cases {
		st := status.Convert(toStatus(c.err))
		if st.Code() != codes.ResourceExhausted || st.Message() != c.want {
			t.Errorf("toStatus(%v) = %v %q, want ResourceExhausted %q", c.err, st.Code(), st.Message(), c.want)
		}
	}
	_, err := g.Parse("SELECT 1 +", "")
	if st := status.Convert(toStatus(err)); st.Code() != codes.InvalidArgument {
		t.Errorf("syntax error = %v", st)
	}
}
