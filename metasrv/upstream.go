package metasrv

import (
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"

	"lakegate/catalog"
	"lakegate/metasrv/api"
)

// Upstream catalogs (lakegate extension). A catalog of type "upstream"
// registers an Arrow Flight SQL engine that lakegate governs but does not
// store data for; its tables name the engine's table in the property
// UpstreamNameProperty, and the gateway forwards the SQL it authorized to
// the engine. metasrv never stores credentials: UpstreamCredentials names a
// file the gateway reads from its own credentials directory.
//
// The catalog package stays generic (a catalog's type is an opaque string);
// the rules live here and are checked by the REST layer, against the
// snapshot a request is planned on, and again by resolve, which fails closed
// (unavailable) when a catalog's properties are somehow invalid.

// Catalog types.
const (
	catalogManaged  = "managed"
	catalogUpstream = "upstream"
)

// Properties of an upstream catalog, and of its tables.
const (
	// UpstreamAddress is the engine's host:port (required).
	UpstreamAddress = "upstream.address"
	// UpstreamDialect is the engine's SQL dialect, "mysql" or "sqlite"
	// (required).
	UpstreamDialect = "upstream.dialect"
	// UpstreamTLS is "true" or "false"; absent means "true".
	UpstreamTLS = "upstream.tls"
	// UpstreamCredentials is the name of a file in the gateway's
	// credentials directory (optional; never the credentials themselves).
	UpstreamCredentials = "upstream.credentials"
	// UpstreamNameProperty is the property of a table of an upstream
	// catalog naming the table on the engine, "schema.table" (required).
	UpstreamNameProperty = "upstream_name"

	upstreamPrefix = "upstream."
)

// errUpstreamNoData is the refusal of data (a storage id, files, a version
// commit) for a table of an upstream catalog.
const errUpstreamNoData = "tables of an upstream catalog hold no data in lakegate"

var (
	credentialsRE  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	upstreamPartRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]{0,63}$`)
	dnsLabelRE     = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)
)

// upstreamEngine is an upstream catalog's engine, parsed from its
// properties.
type upstreamEngine struct {
	Address     string
	Dialect     string
	TLS         bool
	Credentials string
}

// parseUpstream validates the properties of an upstream catalog. Errors
// wrap ErrBadRequest and name the property (never echo a value).
func parseUpstream(props map[string]string) (upstreamEngine, error) {
	var e upstreamEngine
	for k := range props {
		switch k {
		case UpstreamAddress, UpstreamDialect, UpstreamTLS, UpstreamCredentials:
		default:
			if strings.HasPrefix(k, upstreamPrefix) {
				return e, badRequest("unknown upstream catalog property %q (known: %s, %s, %s, %s)", k,
					UpstreamAddress, UpstreamDialect, UpstreamTLS, UpstreamCredentials)
			}
		}
	}
	addr, ok := props[UpstreamAddress]
	if !ok {
		return e, badRequest("an upstream catalog needs property %s (host:port)", UpstreamAddress)
	}
	if err := checkUpstreamAddress(addr); err != nil {
		return e, badRequest("property %s: %v", UpstreamAddress, err)
	}
	e.Address = addr
	switch d, ok := props[UpstreamDialect]; {
	case !ok:
		return e, badRequest("an upstream catalog needs property %s (mysql or sqlite)", UpstreamDialect)
	case d != "mysql" && d != "sqlite":
		return e, badRequest("property %s must be \"mysql\" or \"sqlite\"", UpstreamDialect)
	default:
		e.Dialect = d
	}
	switch t, ok := props[UpstreamTLS]; {
	case !ok || t == "true":
		e.TLS = true
	case t == "false":
	default:
		return e, badRequest("property %s must be \"true\" or \"false\"", UpstreamTLS)
	}
	if c, ok := props[UpstreamCredentials]; ok {
		if !credentialsRE.MatchString(c) || strings.Contains(c, "..") {
			return e, badRequest("property %s must be a file name: 1-128 of [A-Za-z0-9._-], alphanumeric first, without \"..\"", UpstreamCredentials)
		}
		e.Credentials = c
	}
	return e, nil
}

// checkUpstreamAddress checks host:port: a port 1-65535 and a host that is
// a DNS name or an IP literal (IPv6 in brackets).
func checkUpstreamAddress(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("must be host:port")
	}
	if port == "" || strings.TrimLeft(port, "0123456789") != "" {
		return fmt.Errorf("port must be a number from 1 to 65535")
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("port must be a number from 1 to 65535")
	}
	if ip := net.ParseIP(host); ip != nil {
		if strings.HasPrefix(addr, "[") != strings.Contains(host, ":") {
			return fmt.Errorf("an IPv6 host must be in brackets, an IPv4 host not")
		}
		return nil
	}
	if strings.HasPrefix(addr, "[") || !checkDNSName(host) {
		return fmt.Errorf("host must be a DNS name or an IP address")
	}
	return nil
}

// checkDNSName reports whether h is a DNS name: dot-separated labels of
// [A-Za-z0-9-], 1-63 characters, not starting or ending with '-', 253
// characters at most, no trailing dot.
func checkDNSName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, l := range strings.Split(h, ".") {
		if !dnsLabelRE.MatchString(l) {
			return false
		}
	}
	return true
}

// checkCatalogProperties validates the properties of a catalog of type typ:
// an upstream catalog's as parseUpstream does; a managed catalog may not
// carry upstream.* properties.
func checkCatalogProperties(typ string, props map[string]string) error {
	if typ == catalogUpstream {
		_, err := parseUpstream(props)
		return err
	}
	for k := range props {
		if strings.HasPrefix(k, upstreamPrefix) {
			return badRequest("property %q applies to upstream catalogs only", k)
		}
	}
	return nil
}

// checkUpstreamName validates the upstream_name of a table of an upstream
// catalog, "schema.table" on the engine.
func checkUpstreamName(props map[string]string) error {
	n, ok := props[UpstreamNameProperty]
	if !ok {
		return badRequest("a table of an upstream catalog needs property %s (\"schema.table\" on the engine)", UpstreamNameProperty)
	}
	if !validUpstreamName(n) {
		return badRequest("property %s must be \"schema.table\": two parts of 1-64 of [A-Za-z0-9_$], not starting with a digit or '$'", UpstreamNameProperty)
	}
	return nil
}

func validUpstreamName(n string) bool {
	parts := strings.Split(n, ".")
	return len(parts) == 2 && upstreamPartRE.MatchString(parts[0]) && upstreamPartRE.MatchString(parts[1])
}

// upstreamCatalog returns the properties of catalog cat in snap and whether
// it is an upstream catalog, as far as the request may know: a catalog the
// caller may not see (an operator or the tenant admin sees every one) is reported as
// not upstream, leaving the refusal to apply, which answers as for any
// object the caller may not see.
func upstreamCatalog(rq *request, snap *catalog.Snapshot, cat string) (map[string]string, bool) {
	if snap == nil {
		return nil, false
	}
	o := catalog.Catalog(cat)
	info, ok := snap.Object(o)
	if !ok || info.Type != catalogUpstream {
		return nil, false
	}
	if !rq.administers() && !snap.Visible(rq.actor(), o) {
		return nil, false
	}
	return info.Properties, true
}

// alteredProperties returns props after a's property updates (a copy).
func alteredProperties(props map[string]string, a *propertyAlter) map[string]string {
	out := make(map[string]string, len(props)+len(a.set))
	for k, v := range props {
		out[k] = v
	}
	for _, k := range a.remove {
		delete(out, k)
	}
	for k, v := range a.set {
		out[k] = v
	}
	return out
}

// checkPropertyAlter validates a catalog or table property alteration of o
// against the properties it would leave: an upstream catalog's engine
// properties, a managed catalog's lack of them, an upstream table's
// upstream_name. An object the request may not see is left to apply.
func checkPropertyAlter(rq *request, snap *catalog.Snapshot, o catalog.Object, a *propertyAlter) error {
	if snap == nil || (len(a.set) == 0 && len(a.remove) == 0) {
		return nil
	}
	switch o.Type {
	case catalog.ObjectCatalog:
		info, ok := snap.Object(o)
		if !ok || (!rq.administers() && !snap.Visible(rq.actor(), o)) {
			return nil
		}
		return checkCatalogProperties(info.Type, alteredProperties(info.Properties, a))
	case catalog.ObjectTable:
		if err := checkTableCodec(a.set); err != nil {
			return err
		}
		if _, up := upstreamCatalog(rq, snap, rq.param("catalog")); !up {
			return nil
		}
		info, ok := snap.Object(o)
		if !ok {
			return nil
		}
		return checkUpstreamName(alteredProperties(info.Properties, a))
	}
	return nil
}

// resolveUpstream returns the upstream part of the descriptor of table
// (properties tableProps) in the upstream catalog with properties
// catProps; ok is false when either is invalid (the reference is then
// unavailable: fail closed).
func resolveUpstream(catProps, tableProps map[string]string) (*api.Upstream, bool) {
	e, err := parseUpstream(catProps)
	if err != nil {
		return nil, false
	}
	n := tableProps[UpstreamNameProperty]
	if !validUpstreamName(n) {
		return nil, false
	}
	return &api.Upstream{Address: e.Address, Dialect: e.Dialect, TLS: e.TLS, Credentials: e.Credentials, Name: n}, true
}

// snapOf returns l's snapshot, nil for a nil l.
func snapOf(l *Metalake) *catalog.Snapshot {
	if l == nil {
		return nil
	}
	return l.Snapshot
}
