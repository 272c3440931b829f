package flight

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"

	"lakegate/authz"
	"lakegate/flight/backend"
	"lakegate/flight/ticket"
)

// SHOW DATABASES, SHOW TABLES, DESCRIBE and EXPLAIN are answered by the
// gateway, not by the engine's catalog: a statement ticket for one carries
// payloadShow and a showQuery instead of a ticketPayload. The SHOW kinds are
// answered at DoGet from the caller's authorized catalog view (the
// planner's Show, planner_show.go), so they are authorized again when they
// run; EXPLAIN carries the rendered query and its pinned tables like a query
// ticket, is re-authorized like one, and asks the engine for its plan of
// that SQL.

// doGetShow answers a show ticket: the SHOW kinds from the catalog view as
// it is now, EXPLAIN from the engine after re-authorizing its tables.
func (s *Server) doGetShow(ctx context.Context, p *authz.Principal, handle, payload []byte) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	var q showQuery
	if json.Unmarshal(payload[1:], &q) != nil {
		return nil, nil, toStatus(ticket.ErrInvalid)
	}
	s.fetched(ctx, handle, q.Access)
	var rows [][]*string
	switch q.Kind {
	case showExplain:
		if q.SQL == "" {
			return nil, nil, toStatus(ticket.ErrInvalid)
		}
		if err := s.planner.Reauthorize(ctx, s.whoIs(ctx, p), q.Tables); err != nil {
			return nil, nil, s.fail(ctx, "reauthorize", err)
		}
		engine, err := s.enginePlan(ctx, p, handle, q.SQL, q.Tables)
		if err != nil {
			return nil, nil, err // already a status
		}
		rows = [][]*string{{ptrTo(q.SQL)}, {ptrTo(engine)}}
	default:
		release, err := s.admitPlanning(ctx, p)
		if err != nil {
			return nil, nil, s.fail(ctx, "admit", err)
		}
		r, err := s.planner.Show(ctx, s.whoIs(ctx, p), &q)
		release()
		if err != nil {
			return nil, nil, s.fail(ctx, "show", err)
		}
		rows = r
	}
	schema := showSchema(&q)
	b := array.NewRecordBuilder(s.mem, schema)
	defer b.Release()
	accessFrom(ctx).addRows(int64(len(rows)))
	for _, row := range rows {
		for i, v := range row {
			switch f := b.Field(i).(type) {
			case *array.StringBuilder:
				if v == nil {
					f.AppendNull()
				} else {
					f.Append(*v)
				}
			case *array.Int64Builder:
				n, err := strconv.ParseInt(deref(v), 10, 64)
				if v == nil || err != nil {
					f.AppendNull()
				} else {
					f.Append(n)
				}
			}
		}
	}
	return oneBatch(schema, b)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// maxEnginePlan bounds the engine's plan text returned by EXPLAIN.
const maxEnginePlan = 1 << 20

// enginePlan runs EXPLAIN of the rendered sql (which passed the gate's
// lexical check; the prefix keeps it one statement) on the pinned versions
// and returns the engine's physical plan, with paths scrubbed. Errors are
// statuses.
func (s *Server) enginePlan(ctx context.Context, p *authz.Principal, handle []byte, sql string, tables []backend.TableVersion) (string, error) {
	schema, ch, err := s.execute(ctx, p, ticketKey(handle), "EXPLAIN "+sql, nil, tables)
	if err != nil {
		return "", err
	}
	col := -1
	for i, f := range schema.Fields() {
		if f.Name == "explain_value" {
			col = i
		}
	}
	var sb strings.Builder
	var ferr error
	for c := range ch {
		if c.Err != nil {
			ferr = c.Err
			continue
		}
		if col >= 0 && ferr == nil {
			if a, ok := c.Data.Column(col).(*array.String); ok {
				for i := 0; i < a.Len(); i++ {
					if sb.Len() < maxEnginePlan && a.IsValid(i) {
						sb.WriteString(a.Value(i))
					}
				}
			}
		}
		c.Data.Release()
	}
	if ferr != nil {
		return "", ferr
	}
	if col < 0 {
		return "", s.fail(ctx, "explain", fmt.Errorf("engine EXPLAIN returned no explain_value column"))
	}
	out := sb.String()
	if len(out) > maxEnginePlan {
		out = out[:maxEnginePlan]
	}
	return scrubPlan(out), nil
}

// planPathRE matches an absolute file path (two or more components) or a
// URL, as an engine plan could print for a scan.
var planPathRE = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'"│]+|/[^\s/'"│()]+(?:/[^\s/'"│()]*)+`)

// scrubPlan replaces every path in an engine plan by <path>, so a plan never
// shows where a tenant's files are.
func scrubPlan(plan string) string {
	return planPathRE.ReplaceAllString(plan, "<path>")
}
