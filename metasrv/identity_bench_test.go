package metasrv_test

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"lakegate/authz/oidctest"
	"lakegate/metasrv"
)

// benchUsers numbers the users of BenchmarkJWTFirstCall, so that every
// first call is a new user's, across sub-benchmarks and rounds.
var benchUsers atomic.Int64

// benchRounds is how many times BenchmarkJWTFirstCall runs its
// sub-benchmarks in turn (go test names the repeats name#01, …).
const benchRounds = 5

// BenchmarkJWTFirstCall: a new JWT user's first call (GET …/catalogs as
// itself, in group analysts) on a three-node cluster over loopback TCP,
// which syncs its memberships first — on the leader (one proposal), on a
// follower (the sync forwarded to the leader, then the follower waits
// until it has applied it) — and, as the baseline, a synced user's call on
// a follower (no sync). The sub-benchmarks run in turn, benchRounds times:
// compare their ratios within a run.
//
//	GOFLAGS=-tags=duckdb_arrow go test ./metasrv -run '^$' -bench JWTFirstCall -benchtime 200x
func BenchmarkJWTFirstCall(b *testing.B) {
	iss := oidctest.NewIssuer(b)
	withOIDC(b, iss, "namespaces: {all: [sales]}", func(c *metasrv.Config) { onTCP(c); raftTimeouts(c) })
	nodes, leader := startCluster(b, principals(b), 3)
	follower := nodes[1]
	if leader == follower {
		follower = nodes[2]
	}
	withAcme(b, leader)
	seedAnalysts(b, leader)
	synced := groupJWT(b, iss, "steady@acme", "analysts")
	must(b, follower, call{method: "GET", path: ml + "/catalogs", token: synced})
	variants := []struct {
		name  string
		on    *node
		fresh bool
	}{{"first/leader", leader, true}, {"first/follower", follower, true}, {"synced/follower", follower, false}}
	for range benchRounds {
		for _, v := range variants {
			b.Run(v.name, func(b *testing.B) {
				toks := make([]string, b.N)
				for i := range toks {
					toks[i] = synced
					if v.fresh {
						toks[i] = groupJWT(b, iss, fmt.Sprintf("u%d@acme", benchUsers.Add(1)), "analysts")
					}
				}
				b.ResetTimer()
				for i := range b.N {
					if r := do(b, v.on, call{method: "GET", path: ml + "/catalogs", token: toks[i]}); r.status != http.StatusOK {
						b.Fatalf("HTTP %d %s", r.status, r.raw)
					}
				}
			})
		}
	}
}
