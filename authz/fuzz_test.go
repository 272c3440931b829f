package authz_test

import (
	"reflect"
	"regexp"
	"strings"
	"testing"

	"lakegate/authz"
)

// fuzzValueObject checks the validator property: it never panics, an error
// never echoes the input, and an accepted value's String form parses back to
// an equal value.
func fuzzValueObject[T comparable](f *testing.F, parse func(string) (T, error), str func(T) string, canon func(string) string, seeds ...string) {
	// The fixed wording of the errors, from the seeds the parser refuses:
	// an input that is a piece of that wording ("at b") is found in its
	// error without having been echoed. Digits stand for any number.
	var b strings.Builder
	for _, s := range seeds {
		f.Add(s)
		if _, err := parse(s); err != nil {
			b.WriteString(anyDigits(err.Error()) + "\n")
		}
	}
	wording := b.String()
	f.Fuzz(func(t *testing.T, s string) {
		v, err := parse(s)
		if err != nil {
			var zero T
			if v != zero {
				t.Fatalf("error %v with non-zero value", err)
			}
			if len(s) >= 4 && strings.Contains(err.Error(), s) && !strings.Contains(wording, anyDigits(s)) {
				t.Fatalf("error %q echoes the input", err)
			}
			return
		}
		out := str(v)
		if out != canon(s) {
			t.Fatalf("String() = %q, want %q", out, canon(s))
		}
		v2, err := parse(out)
		if err != nil || v2 != v {
			t.Fatalf("re-parse of %q = %v, %v", out, v2, err)
		}
	})
}

func identity(s string) string { return s }

// anyDigits replaces every run of ASCII digits in s by one '#'.
func anyDigits(s string) string { return digitsRE.ReplaceAllLiteralString(s, "#") }

var digitsRE = regexp.MustCompile(`[0-9]+`)

func FuzzParsePrincipalID(f *testing.F) {
	fuzzValueObject(f, authz.ParsePrincipalID, authz.PrincipalID.String, identity,
		"alice@acme", "", "a", "a b", "\x00", strings.Repeat("x", 129), "älice", "a:b.c_d-e@f")
}

func FuzzParseTenantID(f *testing.F) {
	fuzzValueObject(f, authz.ParseTenantID, authz.TenantID.String, identity,
		"acme", "", "-", "a-", "_a", "a_b-c", strings.Repeat("x", 65), "a\x00")
}

func FuzzParseNamespace(f *testing.F) {
	fuzzValueObject(f, authz.ParseNamespace, authz.Namespace.String, strings.ToLower,
		"sales", "Sales", ".", "..", "...", "", "\u212a", "ſ", strings.Repeat("x", 129))
}

var (
	hex64RE = regexp.MustCompile(`[0-9a-fA-F]{64}`)
	tokenRE = regexp.MustCompile(`lg_[A-Za-z0-9_-]{43}`)
)

func FuzzParsePrincipalMap(f *testing.F) {
	f.Add([]byte(validMap))
	f.Add([]byte(""))
	f.Add([]byte("principals: []\n"))
	f.Add([]byte("principals:\n  - {id: a, tenant: acme, role: operator, tokens: [{sha256: " + hAlice + "}]}\n"))
	f.Add([]byte("principals:\n  - {id: a, tenant: acme, role: operator, tokens: [{sha256: " + hAlice + "}], " + hGW + ": 1}\n"))
	f.Add([]byte("principals:\n  - {id: a, tenant: acme, role: operator, tokens: [{sha256: " + hAlice + "}, {sha256: " + strings.ToUpper(hAlice) + "}]}\n"))
	f.Add([]byte(validMap + "---\n" + validMap))
	f.Add([]byte("principals: *" + hAlice + "\n"))
	f.Add([]byte("principals:\n  - &x {id: a, tenant: acme, role: operator, tokens: [{sha256: " + hAlice + "}]}\n  - *x\n"))
	// Scalars that YAML would resolve to non-strings unless quoted.
	f.Add([]byte(`principals:
  - {id: "null", tenant: "1_000", role: user, namespaces: [.nan, "no", "1.0", -.inf, "0x1F"], tokens: [{sha256: ` + hAlice + `}]}
  - {id: "-", tenant: "0o17", role: query_service, delegate_tenants: ["true", "1e3"], tokens: [{sha256: ` + strings.Repeat("1", 64) + `}]}
  - {id: ":", tenant: "y", role: operator, tokens: [{sha256: "` + strings.Repeat("0", 64) + `"}]}
  - {id: "@a", tenant: "Null", role: metadata_peer, tokens: [{sha256: ` + strings.Repeat("1", 63) + `e}]}
`))
	f.Add([]byte(validMap + `oidc:
  providers:
    - {name: idp, issuer: "https://idp.example", audience: lakegate, discovery_url: "https://idp.example/.well-known/openid-configuration",
       algorithms: [RS256, ES256], clock_skew: 30s, tenant: acme, tenant_claim: tid, groups_claim: groups,
       auto_create_users: true, namespaces: {all: [public], groups: {analysts: [sales]}}, refresh_interval: 5m}
    - {name: shared, issuer: "http://127.0.0.1:1", audience: x, jwks_url: "http://127.0.0.1:1/jwks", allow_http: true,
       tenant_claim: tid, tenants: [acme, globex], user_claim: email}
`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := authz.ParsePrincipalMap(data)
		if err != nil {
			msg := err.Error()
			for _, s := range hex64RE.FindAllString(string(data), -1) {
				if strings.Contains(strings.ToLower(msg), strings.ToLower(s)) {
					t.Fatalf("error %q contains a 64-hex string from the input", msg)
				}
			}
			for _, s := range tokenRE.FindAllString(string(data), -1) {
				if strings.Contains(msg, s) {
					t.Fatalf("error %q contains a token from the input", msg)
				}
			}
			return
		}
		if len(m.Providers()) > 0 {
			return // specs describe principals only: the round trip below needs no oidc section
		}
		specs := authz.MapSpecs(m)
		enc, err := authz.EncodePrincipalMap(specs)
		if err != nil {
			t.Fatalf("accepted map does not encode: %v", err)
		}
		m2, err := authz.ParsePrincipalMap(enc)
		if err != nil {
			t.Fatalf("encoded map does not parse: %v\n%s", err, enc)
		}
		if got := authz.MapSpecs(m2); !reflect.DeepEqual(got, specs) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, specs)
		}
		if m2.Len() != m.Len() {
			t.Fatalf("Len %d != %d", m2.Len(), m.Len())
		}
		ps, ps2 := m.Principals(), m2.Principals()
		for i := range ps {
			if ps[i].ID() != ps2[i].ID() || ps[i].Tenant() != ps2[i].Tenant() || ps[i].Role() != ps2[i].Role() ||
				!reflect.DeepEqual(ps[i].Namespaces(), ps2[i].Namespaces()) || !reflect.DeepEqual(ps[i].DelegateTenants(), ps2[i].DelegateTenants()) {
				t.Fatalf("principal %d differs after round trip", i)
			}
		}
	})
}
