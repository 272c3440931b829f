package integration_test

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"
)

// TestMetasrvClusterSurvivesLeaderKill runs over each kind of Raft log
// store (--raft-log): the killed node recovers from what its own disk kept.
func TestMetasrvClusterSurvivesLeaderKill(t *testing.T) {
	for _, kind := range []string{"bolt", "wal"} {
		t.Run("raft-log="+kind, func(t *testing.T) { testMetasrvClusterSurvivesLeaderKill(t, kind) })
	}
}

func testMetasrvClusterSurvivesLeaderKill(t *testing.T, raftLog string) {
	e := newMetasrvEnv(t)
	logFlag := []string{"--raft-log", raftLog}

	// (1) Form a cluster: n1 bootstraps, n2 joins through n1, n3 through
	// n2 (a follower, so the join is forwarded).
	nodes, leader := e.startCluster(t, logFlag...)
	followers := without(nodes, leader)
	t.Logf("leader %s", leader.id)

	// (2) A metalake through the leader, a catalog through a follower; both
	// readable on every node at the write's generation.
	e.must(t, leader, "POST", "/api/metalakes", map[string]any{"name": "acme"})
	gen := e.must(t, followers[0], "POST", "/api/metalakes/acme/catalogs", map[string]any{"name": "lake", "type": "managed"}).gen(t)
	for _, p := range nodes {
		r := e.must(t, p, "GET", "/api/metalakes/acme/catalogs/lake?minGeneration="+strconv.FormatUint(gen, 10), nil)
		if c, _ := r.body["catalog"].(map[string]any); c["name"] != "lake" || r.gen(t) < gen {
			t.Fatalf("%s: catalog at generation %d: %s", p.id, r.gen(t), r.raw)
		}
	}

	// (3) Acknowledged writes through every node.
	const writes = 30
	var acked []string
	for i := range writes {
		name := fmt.Sprintf("s%02d", i)
		r := e.do(t, nodes[i%len(nodes)], "POST", "/api/metalakes/acme/catalogs/lake/schemas", map[string]any{"name": name})
		if c, _ := r.body["code"].(float64); r.status != http.StatusOK || c != 0 {
			t.Fatalf("write %s via %s on a healthy cluster: HTTP %d: %s", name, nodes[i%len(nodes)].id, r.status, r.raw)
		}
		acked = append(acked, name)
	}

	// (4) SIGKILL the leader; the survivors elect a new one and keep every
	// acknowledged write.
	killed := leader
	killed.kill(t)
	killedAt := time.Now()
	survivors := followers
	newLeader := e.waitConverged(t, 3, survivors...)
	t.Logf("new leader %s after %s", newLeader.id, time.Since(killedAt).Round(time.Millisecond))
	via := survivors[0]
	if via == newLeader {
		via = survivors[1]
	}
	postGen := e.must(t, via, "POST", "/api/metalakes/acme/catalogs/lake/schemas", map[string]any{"name": "after_kill"}).gen(t)
	acked = append(acked, "after_kill")
	slices.Sort(acked)
	for _, p := range survivors {
		for _, q := range []string{"consistent=true", "minGeneration=" + strconv.FormatUint(postGen, 10)} {
			got := e.schemaNames(t, p, q)
			slices.Sort(got)
			if !slices.Equal(got, acked) {
				t.Fatalf("%s (%s): schemas %v, want the acknowledged %v", p.id, q, got, acked)
			}
		}
	}

	// (5) Restart the killed node from its data dir on the same addresses
	// (its state makes --bootstrap/--join unnecessary); it catches up.
	restarted, err := e.runMetasrv(t, killed.id, killed.dataDir, killed.httpAddr, killed.raftAddr, logFlag...)
	if err != nil {
		t.Fatal(err)
	}
	e.waitConverged(t, 3, restarted, survivors[0], survivors[1])
	r := e.must(t, restarted, "GET", "/api/metalakes/acme/catalogs/lake/schemas/after_kill?minGeneration="+strconv.FormatUint(postGen, 10), nil)
	if s, _ := r.body["schema"].(map[string]any); s["name"] != "after_kill" {
		t.Fatalf("%s after restart: %s", restarted.id, r.raw)
	}
	got := e.schemaNames(t, restarted, "minGeneration="+strconv.FormatUint(postGen, 10))
	slices.Sort(got)
	if !slices.Equal(got, acked) {
		t.Fatalf("%s after restart: schemas %v, want %v", restarted.id, got, acked)
	}
	if st := restarted.stderr.String(); st != "" {
		t.Logf("%s stderr after restart:\n%s", restarted.id, st)
	}
}
