package metasrv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// oneReadingBody exercises the typed walk: nested structs, a slice of
// them, a map, a raw value and an embedded struct.
type oneReadingBody struct {
	Name  string            `json:"name"`
	Props map[string]string `json:"properties"`
	Items []struct {
		Kind  string  `json:"@type"`
		Value *string `json:"value"`
	} `json:"items"`
	Raw json.RawMessage `json:"raw"`
	oneReadingEmbedded
}

type oneReadingEmbedded struct {
	Note  string `json:"note"`
	Name  int    `json:"name"` // shadowed by oneReadingBody.Name
	Extra int    `json:"extra"`
}

func TestCheckOneReading(t *testing.T) {
	typ := reflect.TypeFor[*oneReadingBody]()
	// The members as encoding/json names them: the struct's own, then the
	// embedded struct's, less the "name" the outer one shadows.
	names, types := structMembers(typ.Elem(), nil, nil)
	if want := []string{"name", "properties", "items", "raw", "note", "extra"}; !slices.Equal(names, want) || types[0].Kind() != reflect.String {
		t.Fatalf("members %v, want %v", names, want)
	}
	for _, tt := range []struct {
		body, want string // want "" accepts
	}{
		{`{"name":"a","properties":{"k":"1","K":"2"},"items":[{"@type":"x","value":"1"},{"@type":"y"}],"raw":{"a":1},"note":"n","extra":1}`, ""},
		{`{"name":"\ufffd \ud83d\ude00 \\ud800 \\\\"}`, ""},
		{`{"name":"a","name":"b"}`, `"name" appears twice`},
		{`{"NOTE":"x"}`, `"NOTE" is not "note"`},
		{`{"items":[{"@TYPE":"x"}]}`, `"@TYPE" is not "@type"`},
		{`{"items":[{"value":"1","value":"2"}]}`, `"value" appears twice`},
		{`{"raw":{"a":1,"a":2}}`, `"a" appears twice`},
		{`{"raw":[{"A":1,"a":2}]}`, ""}, // no declared names inside a raw value
		{`{"properties":{"k":"1","k":"2"}}`, `"k" appears twice`},
		{`{"unknown":1,"UNKNOWN":2}`, ""}, // left to DisallowUnknownFields
		{"{\"name\":\"\xff\"}", "not UTF-8"},
		{`{"name":"\ud800"}`, "lone surrogate escape at byte offset 9"},
		{`{"name":"\udc00\ud800"}`, "lone surrogate"},
		{`{"name":"\ud800\u0041"}`, "lone surrogate"},
		{`{"name":"\ud800`, "lone surrogate"},
		{`{"name":`, ""}, // syntax: the decoder's to report
	} {
		err := checkOneReading([]byte(tt.body), typ)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v, want it accepted", tt.body, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v, want an error saying %q", tt.body, err, tt.want)
		}
	}
}

// oneReadingOracle is checkOneReading's member checks written plainly over
// encoding/json's tokens, to hold the scanner to: on valid JSON the two
// must answer alike.
func oneReadingOracle(b []byte, t reflect.Type) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var value func(t reflect.Type) error
	value = func(t reflect.Type) error {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		t = shape(t)
		switch tok {
		case json.Delim('['):
			var elem reflect.Type
			if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
				elem = t.Elem()
			}
			for d.More() {
				if err := value(elem); err != nil {
					return err
				}
			}
			_, err := d.Token()
			return err
		case json.Delim('{'):
			seen := map[string]bool{}
			for d.More() {
				k, err := d.Token()
				if err != nil {
					return err
				}
				name := k.(string)
				if seen[name] {
					return fmt.Errorf("the member %q appears twice in one object", name)
				}
				seen[name] = true
				var vt reflect.Type
				switch {
				case t != nil && t.Kind() == reflect.Struct:
					ti := typeInfo{shape: t}
					ti.names, ti.types = structMembers(t, nil, nil)
					ft, declared := ti.member([]byte(name))
					if ft == nil && declared != "" {
						return fmt.Errorf("member names are case-sensitive: %q is not %q", name, declared)
					}
					vt = ft
				case t != nil && t.Kind() == reflect.Map:
					vt = t.Elem()
				}
				if err := value(vt); err != nil {
					return err
				}
			}
			_, err := d.Token()
			return err
		}
		return nil
	}
	return value(t)
}

// FuzzCheckOneReading: no input panics; input that is not UTF-8 is
// refused; on valid JSON the scanner's verdict is the plain oracle's; and
// whatever encoding/json itself writes (no repeated members, valid UTF-8,
// escapes it chose) is accepted, so that the checks refuse only what a
// canonical writer never produces.
func FuzzCheckOneReading(f *testing.F) {
	for _, s := range []string{
		`{"name":"a","properties":{"k":"1"},"items":[{"@type":"x"}],"raw":{"a":[1,{"b":null}]}}`,
		`{"name":"a\\ud800\\\"\ud83d\ude00"}`, `{"name":"\ud800\udc00"}`, `[{"a":1},{"a":2}]`, `"\\\\u"`,
		"{\"name\":\"\xed\xa0\x80\"}", `{"tag\u017fToAdd":1}`,
	} {
		f.Add([]byte(s))
	}
	typ := reflect.TypeFor[*oneReadingBody]()
	f.Fuzz(func(t *testing.T, b []byte) {
		err := checkOneReading(b, typ)
		if !utf8.Valid(b) && err == nil {
			t.Fatalf("%q is not UTF-8 and was accepted", b)
		}
		if !json.Valid(b) {
			return
		}
		if _, lone := loneSurrogate(b); !lone && utf8.Valid(b) {
			want := oneReadingOracle(b, typ)
			if (err == nil) != (want == nil) || (err != nil && err.Error() != want.Error()) {
				t.Fatalf("%q: scanner %v, oracle %v", b, err, want)
			}
		}
		var v any
		if json.Unmarshal(b, &v) != nil {
			return
		}
		canonical, merr := json.Marshal(v)
		if merr != nil {
			t.Fatal(merr)
		}
		for _, typ := range []reflect.Type{nil, reflect.TypeFor[any](), reflect.TypeFor[map[string]any]()} {
			if err := checkOneReading(canonical, typ); err != nil {
				t.Fatalf("encoding/json's own %s refused as %v: %v", canonical, typ, err)
			}
		}
	})
}

// BenchmarkDecodeResolveRequest is the cost of the checks on the
// gateways' hot request: a resolve of 5 references.
func BenchmarkDecodeResolveRequest(b *testing.B) {
	body := []byte(`{"subject":"alice","catalog":"lake","minGeneration":42,"refs":[` +
		`{"schema":"sales","table":"orders","privilege":"SELECT_TABLE"},{"schema":"sales","table":"customers","privilege":"SELECT_TABLE"},` +
		`{"schema":"hr","table":"employees","privilege":"SELECT_TABLE"},{"schema":"sales","table":"returns","privilege":"MODIFY_TABLE","version":3},` +
		`{"schema":"ops","table":"events","privilege":"SELECT_TABLE"}]}`)
	for _, bc := range []struct {
		name   string
		decode func([]byte, any) error
	}{{"strict", strictJSON}, {"checked", decodeRequest}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var req ResolveRequest
				if err := bc.decode(body, &req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
