package raftnode_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"

	"lakegate/metasrv/raftnode"
)

// kv is a toy deterministic StateMachine: an append-only log of key=value
// writes. The state is a slice that only ever grows, so a snapshot is the
// slice header itself (entries past its length are invisible to it).
type kv struct {
	entries  atomic.Pointer[[]kvEntry]
	restores atomic.Int32
}

type kvEntry struct {
	Index uint64 `json:"i"`
	Key   string `json:"k"`
	Value string `json:"v"`
}

var _ raftnode.StateMachine = (*kv)(nil)

var errEmptyKey = errors.New("kv: empty key")

func newKV() *kv {
	k := &kv{}
	k.entries.Store(&[]kvEntry{})
	return k
}

// Apply takes "key=value"; an empty key is rejected with an error value.
func (k *kv) Apply(index uint64, cmd []byte) any {
	key, value, _ := strings.Cut(string(cmd), "=")
	if key == "" {
		return errEmptyKey
	}
	next := append(*k.entries.Load(), kvEntry{Index: index, Key: key, Value: value})
	k.entries.Store(&next)
	return index
}

func (k *kv) Snapshot() (raftnode.Snapshot, error) { return kvSnap(*k.entries.Load()), nil }

func (k *kv) Restore(r io.Reader) error {
	var es []kvEntry
	dec := json.NewDecoder(bufio.NewReader(r))
	for {
		var e kvEntry
		if err := dec.Decode(&e); err == io.EOF {
			break
		} else if err != nil {
			return err
		}
		es = append(es, e)
	}
	k.entries.Store(&es)
	k.restores.Add(1)
	return nil
}

func (k *kv) get(key string) (string, bool) {
	es := *k.entries.Load()
	for i := len(es) - 1; i >= 0; i-- {
		if es[i].Key == key {
			return es[i].Value, true
		}
	}
	return "", false
}

func (k *kv) len() int { return len(*k.entries.Load()) }

type kvSnap []kvEntry

func (s kvSnap) Persist(w io.Writer) error {
	enc := json.NewEncoder(w)
	for _, e := range s {
		if err := enc.Encode(e); err != nil {
			return fmt.Errorf("kv: persist: %w", err)
		}
	}
	return nil
}

func (s kvSnap) Release() {}
