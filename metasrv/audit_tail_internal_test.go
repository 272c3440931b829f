package metasrv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"lakegate/catalog"
)

// auditFileOf writes lines to a file and opens it for reading.
func auditFileOf(t testing.TB, lines [][]byte) *os.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.WriteFile(path, bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// scanAudit is what OpenAuditLog did before it read only the tail: every
// line, the highest index of all, and the last want events.
func scanAudit(lines [][]byte, want int) ([]Event, uint64) {
	var all []Event
	var maxIndex uint64
	for _, l := range bytes.Split(bytes.Join(lines, nil), []byte{'\n'}) {
		var e Event
		if json.Unmarshal(l, &e) != nil {
			continue
		}
		all = append(all, e)
		maxIndex = max(maxIndex, e.Index)
	}
	return all[max(0, len(all)-want):], maxIndex
}

// TestReadAuditTail holds the backward reader to a full scan of the file
// over random files: indexed and unindexed events of random sizes, runs of
// rejections after the last applied event, a torn last line, chunks smaller
// than a line.
func TestReadAuditTail(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var lines [][]byte
		var index uint64
		n := rng.IntN(300)
		for i := range n {
			e := Event{Metalake: "acme", Event: catalog.Event{Actor: "alice", Operation: "CreateCatalog",
				Outcome: catalog.Failure, Detail: string(bytes.Repeat([]byte{'x'}, rng.IntN(200)))}}
			if rng.IntN(3) > 0 && i < n-rng.IntN(50) {
				index += uint64(1 + rng.IntN(3))
				e.Index, e.Outcome = index, catalog.Success
			}
			b, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, append(b, '\n'))
		}
		if rng.IntN(4) == 0 {
			lines = append(lines, []byte(`{"metalake":"acme","index":99999,"act`)) // torn by a crash
		}
		want, chunk := 1+rng.IntN(40), 1+rng.IntN(700)
		f := auditFileOf(t, lines)
		got, gotMax, err := readAuditTail(f, want, chunk)
		if err != nil {
			t.Fatal(err)
		}
		wantEvs, wantMax := scanAudit(lines, want)
		if gotMax != wantMax || !slices.EqualFunc(got, wantEvs, func(a, b Event) bool { return a.Index == b.Index && a.Detail == b.Detail }) {
			t.Fatalf("round %d (%d lines, want %d, chunk %d): index %d, %d events; the full scan: index %d, %d events",
				round, len(lines), want, chunk, gotMax, len(got), wantMax, len(wantEvs))
		}
	}
}

// TestOpenAuditLogReadsOnlyTheTail: opening the audit file reads its end,
// not all of it. The full scan it replaces also refused to open a file
// holding one line over 16 MiB anywhere (bufio.Scanner's limit): the node
// then could not start at all.
func TestOpenAuditLogReadsOnlyTheTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	var buf bytes.Buffer
	buf.Write(bytes.Repeat([]byte("x"), 20<<20))
	buf.WriteByte('\n')
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&buf, `{"metalake":"acme","index":%d,"actor":"alice","operation":"CreateCatalog","outcome":"success"}`+"\n", 1000+i)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := OpenAuditLog(path, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.maxIndex != 1010 {
		t.Fatalf("maxIndex %d, want 1010", a.maxIndex)
	}
	evs := a.Events("acme", 0, 0, 10)
	if len(evs) != 4 || evs[0].Index != 1010 || evs[3].Index != 1007 {
		t.Fatalf("ring: %+v", evs)
	}
}

// BenchmarkOpenAuditTail: recovering the ring and the highest index from a
// 256 MiB audit file (≈ 1M events) by its tail, against the full scan it
// replaces.
func BenchmarkOpenAuditTail(b *testing.B) {
	var lines [][]byte
	for i := 1; i <= 1_000_000; i++ {
		lines = append(lines, fmt.Appendf(nil, `{"metalake":"acme","index":%d,"time":"2026-11-30T12:00:00Z","actor":"alice@acme","operation":"AssociateTags","target":{"type":"CATALOG","fullName":"c%d"},"outcome":"success","detail":"%s"}`+"\n", i, i%64, bytes.Repeat([]byte{'d'}, 60)))
	}
	f := auditFileOf(b, lines)
	b.Run("tail", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := readAuditTail(f, DefaultAuditRing, auditTailChunk); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("full-scan", func(b *testing.B) {
		for b.Loop() {
			data, err := os.ReadFile(f.Name())
			if err != nil {
				b.Fatal(err)
			}
			scanAudit([][]byte{data}, DefaultAuditRing)
		}
	})
}
