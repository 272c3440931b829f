package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"lakegate/authz"
)

func TestAdminOwner(t *testing.T) {
	t.Setenv("LAKEGATE_METASRV", "")
	t.Setenv("LAKEGATE_TOKEN", "")
	t.Setenv("LAKEGATE_METALAKE", "")
	h := func(s string) []string { return []string{authz.HashToken(s).String()} }
	server := startTestMetasrv(t, []authz.PrincipalSpec{
		{ID: "root", Tenant: "platform", Role: "operator", TokenHashes: h("tok-admin")},
		{ID: "bob@acme", Tenant: "acme", Role: "user", Namespaces: []string{"sales"}, TokenHashes: h("tok-bob")},
		{ID: "eve@other", Tenant: "other", Role: "tenant_admin", TokenHashes: h("tok-eve")},
		{ID: "admin@acme", Tenant: "acme", Role: "tenant_admin", TokenHashes: h("tok-acme-admin")},
	})
	admin := func(token string, args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := run(context.Background(), append([]string{"admin", "--server", server, "--token", token, "--metalake", "acme"}, args...), &out, &errOut)
		return out.String(), err
	}
	ok := func(token string, args ...string) string {
		t.Helper()
		out, err := admin(token, args...)
		if err != nil {
			t.Fatalf("admin %q: %v", args, err)
		}
		return out
	}
	ok("tok-admin", "metalake", "create", "acme", "--owner", "admin@acme")
	ok("tok-acme-admin", "catalog", "create", "lake")
	ok("tok-acme-admin", "schema", "create", "lake.sales")
	ok("tok-acme-admin", "user", "create", "bob@acme")

	steps := []struct {
		name    string
		token   string
		args    []string
		want    []string // substrings of the output
		wantErr []string // substrings of the error; usage errors say usage
		usage   bool
	}{
		{name: "get: the creator owns it", token: "tok-acme-admin", args: []string{"owner", "get", "schema", "lake.sales"},
			want: []string{"object: schema lake.sales", "owner:  admin@acme", "type:   user"}},
		{name: "a user who cannot see it is told it does not exist", token: "tok-bob", args: []string{"owner", "get", "schema", "lake.sales"},
			wantErr: []string{"404", "NotFoundException"}},
		{name: "a dry run changes nothing", token: "tok-acme-admin", args: []string{"owner", "set", "catalog", "lake", "user", "bob@acme", "--dry-run"},
			want: []string{"dry run of SetOwner: nothing was changed", "bob@acme", "USE_SCHEMA", "gains"}},
		{name: "still the creator's after the dry run", token: "tok-acme-admin", args: []string{"owner", "get", "catalog", "lake"},
			want: []string{"owner:  admin@acme"}},
		{name: "set to a user", token: "tok-acme-admin", args: []string{"owner", "set", "schema", "lake.sales", "user", "bob@acme"},
			want: []string{"schema lake.sales is now owned by user bob@acme"}},
		{name: "get after set, type in any case", token: "tok-acme-admin", args: []string{"owner", "get", "SCHEMA", "lake.sales"},
			want: []string{"owner:  bob@acme", "type:   user"}},
		{name: "flags after the arguments", token: "tok-acme-admin", args: []string{"owner", "get", "catalog", "lake", "--json"},
			want: []string{`"owner":{"name":"admin@acme","type":"user"}`}},
		{name: "owner kind neither user nor group", token: "tok-acme-admin", args: []string{"owner", "set", "schema", "lake.sales", "robot", "x"},
			usage: true, wantErr: []string{`a user or a group, not "robot"`}},
		{name: "too few arguments", token: "tok-acme-admin", args: []string{"owner", "set", "schema", "lake.sales", "user"},
			usage: true, wantErr: []string{"usage: lakegate admin owner set OBJECT_TYPE FULLNAME user|group NAME"}},
		{name: "missing object", token: "tok-acme-admin", args: []string{"owner", "get", "schema", "lake.nope"},
			wantErr: []string{"404"}},
		// Another tenant's admin is answered as if the metalake did not
		// exist; so is a user who cannot see the object.
		{name: "other tenant", token: "tok-eve", args: []string{"owner", "get", "schema", "lake.sales"},
			wantErr: []string{"404"}},
		{name: "other tenant may not set", token: "tok-eve", args: []string{"owner", "set", "schema", "lake.sales", "user", "eve@other"},
			wantErr: []string{"404"}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			out, err := admin(s.token, s.args...)
			if s.wantErr != nil {
				if err == nil {
					t.Fatalf("no error; output:\n%s", out)
				}
				if errors.Is(err, errUsage) != s.usage {
					t.Errorf("usage error %v, want %v: %v", errors.Is(err, errUsage), s.usage, err)
				}
				for _, w := range s.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range s.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
	// A request metasrv refuses before the log (a user cannot be owned).
	if _, err := admin("tok-acme-admin", "owner", "set", "user", "bob@acme", "user", "admin@acme"); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("owner set on a user: %v", err)
	}
	// The owner change and the refusal are in the events, said readably.
	out := ok("tok-acme-admin", "events", "--limit", "20")
	for _, want := range []string{"owner of schema lake.sales set to user bob@acme",
		"PUT /api/metalakes/{m}/owners/{type}/{fullName}", "rejected: bad request"} {
		if !strings.Contains(out, want) {
			t.Errorf("events lack %q:\n%s", want, out)
		}
	}
}
