package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// FuzzDecodeCanonical checks that the one-pass decoder of canonical
// envelopes agrees with the general decoder whenever it accepts.
func FuzzDecodeCanonical(f *testing.F) {
	for _, c := range []Command{
		CreateUser{Name: "u"},
		CreateTable{Name: "c.s.t", Columns: []ColumnDef{{Name: "a", Type: "INT", Nullable: true}}},
		AlterTag{Name: "t", Updates: []TagUpdate{{Type: "rename", NewName: "t2"}}},
		AlterObject{Object: Table("c.s.t"), SetProperties: map[string]string{"k": "v"}, RemoveProperties: []string{"x"}},
		AssociateTagsV2{Object: Catalog("c00"), TagsToAdd: []TagValue{{Name: "pii", Value: "v00"}}},
		AssociateTagsV2{Object: Table("c.s.t"), TagsToAdd: []TagValue{{Name: "a"}, {Name: "é", Value: "x"}}, TagsToRemove: []TagValue{{Name: "b"}}},
	} {
		b, err := EncodeCommand(c)
		if err != nil {
			f.Fatal(err)
		}
		if _, ok := decodeCanonical(b); !ok {
			f.Fatalf("canonical encoding %s not taken by the one-pass decoder", b)
		}
		f.Add(b)
	}
	for _, s := range []string{
		`{"v":1,"type":8,"body":{"name":"u"}} `,
		`{"v":1,"type":8,"body":{"name":"u"}}{}`,
		`{"v":1,"type":8,"body":{"name":"u"},"v":2}`,
		`{"v":1,"type":8,"body":{"name":"u"},"x":1}`,
		`{"v":1,"type":8,"body":{"name":"u","extra":1}}`,
		`{"v":1,"type":08,"body":{"name":"u"}}`,
		`{"v":1,"type":65544,"body":{"name":"u"}}`,
		`{"v":1,"type":99,"body":{"name":"u"}}`,
		`{"v":1,"type":8,"body":null}`,
		`{"v":1,"type":8,"body":{"name":"u"}`,
		`{"v":1,"type":8,"body":{"name":"u"}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, ok := decodeCanonical(b)
		if !ok {
			return
		}
		g, err := decodeGeneral(b)
		if err != nil {
			t.Fatalf("one-pass accepted %q, general rejected it: %v", b, err)
		}
		if !reflect.DeepEqual(c, g) {
			t.Fatalf("%q: one-pass %#v, general %#v", b, c, g)
		}
	})
}

// TestDecodeCanonicalTakesEncodings checks that every encoding
// EncodeCommand writes is decoded by the one-pass path.
func TestDecodeCanonicalTakesEncodings(t *testing.T) {
	empty := ""
	for _, c := range []Command{CreateUser{Name: "u"}, DropUser{Name: "u"}, CreateTag{Name: "t"},
		AlterObject{Object: Catalog("c"), Comment: &empty}} {
		b, err := EncodeCommand(c)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := decodeCanonical(b)
		if !ok || !reflect.DeepEqual(got, c) {
			t.Fatalf("%s: got %#v, %v", b, got, ok)
		}
	}
}

// TestEncodeCommandEnvelope pins EncodeCommand's bytes to what marshaling
// the envelope with encoding/json writes, for bodies with characters
// encoding/json escapes.
func TestEncodeCommandEnvelope(t *testing.T) {
	for _, c := range []Command{
		CreateUser{Name: "u"},
		CreateCatalog{Name: "c<1>&\u2028é", Comment: "a \"quoted\"\tcomment\x7f"},
		CreateTable{Name: "c.s.t", Columns: []ColumnDef{{Name: "a", Type: "INT", Nullable: true}}},
		AlterTag{Name: "t", Updates: []TagUpdate{{Type: "rename", NewName: "t2"}}},
		AlterObject{Object: Table("c.s.t"), SetProperties: map[string]string{"k": "v", "<": ">"}, RemoveProperties: []string{"x"}},
		AssociateTagsV2{Object: Catalog("c00"), TagsToAdd: []TagValue{{Name: "pii", Value: "v00"}}},
	} {
		got, err := EncodeCommand(c)
		if err != nil {
			t.Fatal(err)
		}
		body, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(envelope{V: commandVersion, Type: c.commandType(), Body: body})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("EncodeCommand(%#v):\n got %s\nwant %s", c, got, want)
		}
		if d, err := DecodeCommand(got); err != nil || !reflect.DeepEqual(d, c) {
			t.Errorf("DecodeCommand(%s) = %#v, %v", got, d, err)
		}
	}
}

// TestIntroducedNamesKnowsEveryCommand: a new command type must say which
// names it introduces (introducedNames), or metasrv would let its names
// pass unchecked.
func TestIntroducedNamesKnowsEveryCommand(t *testing.T) {
	n := 0
	for typ := CommandType(1); typ < 1000; typ++ {
		c, err := decodeBodyOf(typ, []byte("{}"), false)
		if errors.Is(err, errUnknownType) {
			continue
		}
		if err != nil {
			t.Fatalf("type %d: %v", typ, err)
		}
		n++
		if _, known := introducedNames(c); !known {
			t.Errorf("introducedNames does not list %T", c)
		}
	}
	if n < int(TypeDropDomain) {
		t.Fatalf("found %d command types, want at least %d", n, TypeDropDomain)
	}
}
