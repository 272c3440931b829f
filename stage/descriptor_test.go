package stage_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"lakegate/stage"
)

func TestParseDescriptor(t *testing.T) {
	cases := []struct {
		name, json string
		ok         bool
	}{
		{"s3", `{"version":1,"s3":{"bucket":"lake","prefix":"prod/stage","region":"us-east-1","endpoint":"http://127.0.0.1:4566","path_style":true}}`, true},
		{"local", `{"version":1,"local":{"root":"/var/lib/lakegate"}}`, true},
		{"unknown top field", `{"version":1,"local":{"root":"/x"},"secret":"k"}`, false},
		{"unknown backend field", `{"version":1,"s3":{"bucket":"lake","prefix":"p","access_key":"AKIA"}}`, false},
		{"trailing data", `{"version":1,"local":{"root":"/x"}} {}`, false},
		{"version 2", `{"version":2,"local":{"root":"/x"}}`, false},
		{"no version", `{"local":{"root":"/x"}}`, false},
		{"both backends", `{"version":1,"local":{"root":"/x"},"s3":{"bucket":"lake","prefix":"p"}}`, false},
		{"no backend", `{"version":1}`, false},
		{"relative root", `{"version":1,"local":{"root":"x/y"}}`, false},
		{"unclean root", `{"version":1,"local":{"root":"/x/../y"}}`, false},
		{"slash root", `{"version":1,"local":{"root":"/"}}`, false},
		{"short bucket", `{"version":1,"s3":{"bucket":"ab","prefix":"p"}}`, false},
		{"long bucket", `{"version":1,"s3":{"bucket":"` + strings.Repeat("a", 64) + `","prefix":"p"}}`, false},
		{"upper bucket", `{"version":1,"s3":{"bucket":"Lake","prefix":"p"}}`, false},
		{"ip bucket", `{"version":1,"s3":{"bucket":"192.168.1.1","prefix":"p"}}`, false},
		{"dotdot bucket", `{"version":1,"s3":{"bucket":"a..b","prefix":"p"}}`, false},
		{"dash-ended bucket", `{"version":1,"s3":{"bucket":"lake-","prefix":"p"}}`, false},
		{"empty prefix", `{"version":1,"s3":{"bucket":"lake","prefix":""}}`, false},
		{"leading slash prefix", `{"version":1,"s3":{"bucket":"lake","prefix":"/p"}}`, false},
		{"trailing slash prefix", `{"version":1,"s3":{"bucket":"lake","prefix":"p/"}}`, false},
		{"double slash prefix", `{"version":1,"s3":{"bucket":"lake","prefix":"p//q"}}`, false},
		{"dotdot prefix", `{"version":1,"s3":{"bucket":"lake","prefix":"p/../q"}}`, false},
		{"percent prefix", `{"version":1,"s3":{"bucket":"lake","prefix":"p%2Fq"}}`, false},
		{"bad region", `{"version":1,"s3":{"bucket":"lake","prefix":"p","region":"US EAST"}}`, false},
		{"endpoint with user info", `{"version":1,"s3":{"bucket":"lake","prefix":"p","endpoint":"http://AKIA:secret@host"}}`, false},
		{"endpoint with query", `{"version":1,"s3":{"bucket":"lake","prefix":"p","endpoint":"http://host/?x=1"}}`, false},
		{"endpoint scheme", `{"version":1,"s3":{"bucket":"lake","prefix":"p","endpoint":"file:///etc"}}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := stage.ParseDescriptor([]byte(c.json))
			if c.ok != (err == nil) {
				t.Fatalf("ParseDescriptor: %v, want ok=%v", err, c.ok)
			}
			if err != nil {
				if !errors.Is(err, stage.ErrInvalidDescriptor) {
					t.Fatalf("error %v does not wrap ErrInvalidDescriptor", err)
				}
				return
			}
			// Round trip.
			js, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			d2, err := stage.ParseDescriptor(js)
			if err != nil || d2.String() != d.String() {
				t.Fatalf("round trip: %s %v", js, err)
			}
		})
	}
}

func TestForTenant(t *testing.T) {
	s3 := stage.Descriptor{Version: 1, S3: &stage.S3Descriptor{Bucket: "lake", Prefix: "prod", Region: "us-east-1"}}
	local := stage.Descriptor{Version: 1, Local: &stage.LocalDescriptor{Root: "/srv/stage"}}
	cases := []struct {
		d      stage.Descriptor
		tenant string
		want   string // String() of the child, "" for an error
	}{
		{s3, "acme", "s3://lake/prod/tenants/acme"},
		{s3, "a_b-9", "s3://lake/prod/tenants/a_b-9"},
		{local, "acme", "local:/srv/stage/tenants/acme"},
		{s3, "", ""},
		{s3, "..", ""},
		{s3, "a/b", ""},
		{s3, "-a", ""},
		{s3, "a_", ""},
		{s3, "a.b", ""},
		{s3, strings.Repeat("a", 65), ""},
		{local, "../b", ""},
		{stage.Descriptor{Version: 1}, "acme", ""},
	}
	for _, c := range cases {
		got, err := c.d.ForTenant(c.tenant)
		if c.want == "" {
			if err == nil {
				t.Errorf("ForTenant(%q) on %s = %s, want an error", c.tenant, c.d, got)
			}
			continue
		}
		if err != nil || got.String() != c.want {
			t.Errorf("ForTenant(%q) on %s = %s, %v; want %s", c.tenant, c.d, got, err, c.want)
		}
	}
	// The parent is not modified (S3Descriptor is copied).
	if _, err := s3.ForTenant("x"); err != nil || s3.S3.Prefix != "prod" {
		t.Fatalf("parent changed: %s", s3)
	}
}
