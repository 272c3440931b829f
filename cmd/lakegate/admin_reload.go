package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow/flight"

	lgflight "lakegate/flight"
	"lakegate/metasrv"
)

// adminPrincipalsReload is `lakegate admin principals reload`: each named
// process reloads its principal map file, a platform operator's call. The
// metasrv node at --server always; every gateway named by --gateway too
// (through the Flight action lakegate.principals.reload). It stops at the
// first process that refuses; that process keeps its previous map.
func adminPrincipalsReload(a *admin, args []string) error {
	fs := a.flags()
	var gateways stringList
	fs.Var(&gateways, "gateway", "also reload the gateway at `ADDR` (host:port; repeatable); the global --token, --tls-ca and --insecure-no-tls apply to it")
	useTLS := fs.Bool("tls", false, "connect to the gateways with TLS")
	noMetasrv := fs.Bool("no-metasrv", false, "reload only the gateways, not the metasrv node at --server")
	if _, err := a.parse(fs, args, 0, 0, ""); err != nil {
		return err
	}
	if !*noMetasrv {
		raw, err := a.call("POST", metasrv.ReloadPath, nil, nil, "")
		if err != nil {
			return fmt.Errorf("metasrv %s: %w", a.server, err)
		}
		var r struct {
			Generation uint64 `json:"generation"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return fmt.Errorf("metasrv %s: decoding the answer: %w", a.server, err)
		}
		fmt.Fprintf(a.stdout, "metasrv %s: principal map generation %d\n", a.server, r.Generation)
	}
	for _, addr := range gateways {
		gen, err := reloadGateway(a, addr, *useTLS)
		if err != nil {
			return fmt.Errorf("gateway %s: %w", addr, err)
		}
		fmt.Fprintf(a.stdout, "gateway %s: principal map generation %d\n", addr, gen)
	}
	return nil
}

// reloadGateway asks the gateway at addr to reload its principal map.
func reloadGateway(a *admin, addr string, useTLS bool) (uint64, error) {
	c := &connFlags{addr: &addr, useTLS: &useTLS, token: &a.token, caFile: &a.tlsCA, insecure: &a.insecure}
	if err := c.resolve(); err != nil {
		return 0, err
	}
	cl, ctx, err := c.dial(a.ctx)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	stream, err := cl.Client.DoAction(ctx, &flight.Action{Type: lgflight.ReloadPrincipalsActionType})
	if err != nil {
		return 0, shellError(err)
	}
	res, err := stream.Recv()
	if err != nil {
		return 0, shellError(err)
	}
	for {
		if _, err := stream.Recv(); err == io.EOF {
			break
		} else if err != nil {
			return 0, shellError(err)
		}
	}
	var r struct {
		Generation uint64 `json:"generation"`
	}
	if err := json.Unmarshal(res.GetBody(), &r); err != nil {
		return 0, fmt.Errorf("decoding the answer: %w", err)
	}
	return r.Generation, nil
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return fmt.Sprint(*l) }

func (l *stringList) Set(v string) error {
	*l = append(*l, v)
	return nil
}
