package integration_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-adbc/go/adbc"
)

// update runs sql with ADBC's ExecuteUpdate (a Flight SQL DoPut, as JDBC's
// Statement.executeUpdate and execute send a statement without rows).
func (c *client) update(ctx context.Context, sql string) error {
	stmt, err := c.conn.NewStatement()
	if err != nil {
		return err
	}
	defer stmt.Close()
	if err := stmt.SetSqlQuery(sql); err != nil {
		return err
	}
	_, err = stmt.ExecuteUpdate(ctx)
	return err
}

// TestSessionUse: USE changes the session whichever path sends it, on a fresh
// connection: ExecuteUpdate (DoPut) first, before any query; ExecuteQuery; a
// prepared statement run with ExecuteUpdate or ExecuteQuery. The next query
// names its table without a schema.
func TestSessionUse(t *testing.T) {
	srv := startServe(t)
	ctx := context.Background()
	token := srv.token(t, "analyst@demo")
	const probe = "SELECT count(*) FROM orders"
	for _, path := range []struct {
		name string
		use  func(t *testing.T, c *client) error
	}{
		{"ExecuteUpdate first", func(t *testing.T, c *client) error { return c.update(ctx, "USE sales") }},
		{"ExecuteQuery", func(t *testing.T, c *client) error { _, _, err := c.query(ctx, "USE sales"); return err }},
		{"prepared ExecuteUpdate", func(t *testing.T, c *client) error {
			_, err := c.prepare(t, "USE sales").ExecuteUpdate(ctx)
			return err
		}},
		{"prepared ExecuteQuery", func(t *testing.T, c *client) error {
			rdr, _, err := c.prepare(t, "USE sales").ExecuteQuery(ctx)
			if err == nil {
				rdr.Release()
			}
			return err
		}},
	} {
		t.Run(path.name, func(t *testing.T) {
			c := mustDial(t, srv.uri(), bearer(token))
			// Nothing but the driver's own connection set-up has run: the
			// query without a schema fails until USE.
			if _, _, err := c.query(ctx, probe); adbcStatus(err) != adbc.StatusInvalidArgument {
				t.Fatalf("before USE: %v", err)
			}
			if err := path.use(t, c); err != nil {
				t.Fatalf("USE sales: %v", err)
			}
			_, rows, err := c.query(ctx, probe)
			if err != nil || len(rows) != 1 {
				t.Fatalf("after USE: %v %v", rows, err)
			}
		})
	}
	t.Run("USE through ExecuteUpdate is the first call after connecting", func(t *testing.T) {
		c := mustDial(t, srv.uri(), bearer(token))
		if err := c.update(ctx, "USE sales"); err != nil {
			t.Fatal(err)
		}
		_, rows, err := c.query(ctx, probe)
		if err != nil || len(rows) != 1 {
			t.Fatalf("after USE: %v %v", rows, err)
		}
		// A second USE on the same path moves the same session.
		if err := c.update(ctx, "USE hr"); adbcStatus(err) != adbc.StatusNotFound {
			t.Fatalf("USE hr (not granted): %v", err)
		}
		if _, rows, err := c.query(ctx, "SHOW TABLES"); err != nil || !slices.Equal(column0(rows), []string{"customers", "orders"}) {
			t.Fatalf("SHOW TABLES: %v %v", rows, err)
		}
	})
}

func column0(rows [][]string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r[0])
	}
	return out
}

var _ = strings.Contains
