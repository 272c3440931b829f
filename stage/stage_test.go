package stage_test

import (
	"slices"
	"testing"

	"lakegate/stage/stagetest"
)

func TestBackends(t *testing.T) {
	backends := []*stagetest.Backend{stagetest.Local(t), stagetest.S3(t)}
	transcripts := map[string][]string{}
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) { transcripts[b.Name] = stagetest.Run(t, b.Open) })
	}
	if l, s := transcripts["local"], transcripts["s3"]; !slices.Equal(l, s) {
		for i := range max(len(l), len(s)) {
			if i >= len(l) || i >= len(s) || l[i] != s[i] {
				t.Errorf("backends differ at case %d:\n local: %v\n s3:    %v", i, at(l, i), at(s, i))
			}
		}
	}
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "(missing)"
}

func TestIsolation(t *testing.T) {
	for _, b := range []*stagetest.Backend{stagetest.Local(t), stagetest.S3(t)} {
		t.Run(b.Name, func(t *testing.T) { stagetest.RunIsolation(t, b) })
	}
}
