package metasrv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// decodeRequest decodes a client's request body strictly into v (see
// strictJSON), after refusing, with checkOneReading, JSON that other
// parsers may read differently from encoding/json.
func decodeRequest(b []byte, v any) error {
	if err := checkOneReading(b, reflect.TypeOf(v)); err != nil {
		return err
	}
	return strictJSON(b, v)
}

// checkOneReading refuses what encoding/json accepts silently but other
// parsers (a proxy, a log pipeline, a reviewer's tool) read differently,
// so that everyone on a request's way acts on the same values:
//
//   - a member named twice in one object (encoding/json keeps the last;
//     many parsers keep the first);
//   - a member of a struct type named in another case than declared
//     (encoding/json matches names case-insensitively, even by Unicode
//     folding: "ſ" for "s", "K" (Kelvin) for "k");
//   - bytes that are not UTF-8, or a \u escape of a lone surrogate
//     (encoding/json turns both into U+FFFD).
//
// t is the type the body will be decoded into; objects inside values of
// other kinds (json.RawMessage, any) are checked for repeated members and
// encoding only. The body must be valid JSON for a useful answer; syntax
// errors are left to the decoder.
func checkOneReading(b []byte, t reflect.Type) error {
	if !utf8.Valid(b) {
		return errors.New("the body is not UTF-8")
	}
	if off, ok := loneSurrogate(b); ok {
		return fmt.Errorf("the body is not UTF-8: a lone surrogate escape at byte offset %d", off)
	}
	sc := readingScanner{b: b}
	if err := sc.value(t, 0); err != nil && err != errSyntax {
		return err
	}
	return nil
}

// loneSurrogate reports the offset of a \u escape of a UTF-16 surrogate
// that is not a high one followed by a low one. Backslashes occur only in
// strings in valid JSON, so every one starts an escape.
func loneSurrogate(b []byte) (int, bool) {
	hex4 := func(i int) (rune, bool) {
		if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(string(b[i+2:i+6]), 16, 16)
		return rune(v), err == nil
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		r, ok := hex4(i)
		if !ok {
			i++ // a two-character escape such as \\ or \"
			continue
		}
		switch {
		case r >= 0xd800 && r < 0xdc00:
			if lo, ok := hex4(i + 6); !ok || lo < 0xdc00 || lo > 0xdfff {
				return i, true
			}
			i += 11
		case r >= 0xdc00 && r <= 0xdfff:
			return i, true
		default:
			i += 5
		}
	}
	return 0, false
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// shape returns what the decoder will do with a value of type t: the
// type with pointers removed, or nil when the decoder has no fixed shape
// for it (interfaces, types that decode themselves).
func shape(t reflect.Type) reflect.Type {
	for t != nil {
		if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
			return nil
		}
		switch t.Kind() {
		case reflect.Pointer:
			t = t.Elem()
		case reflect.Interface:
			return nil
		default:
			return t
		}
	}
	return nil
}

// readingScanner walks a JSON text for checkOneReading without building
// it: only member names are looked at. It stops quietly at the first
// syntax error (errSyntax), which the decoder then reports.
type readingScanner struct {
	b     []byte
	i     int
	types []typeInfo // the types met so far, looked up in order
}

// typeInfo is what the scan needs of a type the body decodes into.
type typeInfo struct {
	t     reflect.Type // as the parent declares it
	shape reflect.Type // shape(t)
	// For a struct: the JSON member names as encoding/json reads them
	// (untagged embedded structs' fields promoted, below the struct's own
	// fields of the same name), and their types.
	names []string
	types []reflect.Type
}

// info returns what the scan needs of t, worked out once per scan: a
// request repeats the same few types (one per reference of a resolve).
func (s *readingScanner) info(t reflect.Type) typeInfo {
	for _, ti := range s.types {
		if ti.t == t {
			return ti
		}
	}
	ti := typeInfo{t: t, shape: shape(t)}
	if ti.shape != nil && ti.shape.Kind() == reflect.Struct {
		ti.names, ti.types = structMembers(ti.shape, nil, nil)
	}
	s.types = append(s.types, ti)
	return ti
}

// member returns the type of the member named exactly name, or, when
// there is none, the declared name that name matches only without regard
// to case, as encoding/json would match it ("" if none).
func (ti typeInfo) member(name []byte) (reflect.Type, string) {
	for i, n := range ti.names {
		if n == string(name) {
			return ti.types[i], ""
		}
	}
	for _, n := range ti.names {
		if bytes.EqualFold([]byte(n), name) {
			return nil, n
		}
	}
	return nil, ""
}

// structMembers appends struct t's JSON members to names and types.
func structMembers(t reflect.Type, names []string, types []reflect.Type) ([]string, []reflect.Type) {
	own := len(names)
	var embedded []reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		n, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && n == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				embedded = append(embedded, ft)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if n == "" {
			n = f.Name
		}
		names, types = append(names, n), append(types, f.Type)
	}
	mine := names[own:]
	for _, et := range embedded {
		pn, pt := structMembers(et, nil, nil)
		for i, n := range pn {
			if !slices.Contains(mine, n) {
				names, types = append(names, n), append(types, pt[i])
			}
		}
	}
	return names, types
}

// errSyntax stops the scan at malformed JSON, or JSON nested deeper than
// maxNesting, which encoding/json refuses too.
var errSyntax = errors.New("syntax")

// maxNesting is encoding/json's limit of nested objects and arrays.
const maxNesting = 10000

func (s *readingScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// value walks the value at s.i, expected to decode into t, inside depth
// objects and arrays.
func (s *readingScanner) value(t reflect.Type, depth int) error {
	s.space()
	if s.i >= len(s.b) || depth > maxNesting {
		return errSyntax
	}
	switch s.b[s.i] {
	case '{':
		s.i++
		return s.object(s.info(t), depth+1)
	case '[':
		s.i++
		var elem reflect.Type
		if t = s.info(t).shape; t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		s.space()
		if s.i < len(s.b) && s.b[s.i] == ']' {
			s.i++
			return nil
		}
		for {
			if err := s.value(elem, depth+1); err != nil {
				return err
			}
			if end, err := s.next(']'); end || err != nil {
				return err
			}
		}
	case '"':
		_, _, err := s.str()
		return err
	default: // a number, true, false or null
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', ']', '}', ' ', '\t', '\r', '\n':
				return nil
			}
			s.i++
		}
		return nil
	}
}

// next consumes the ',' between members or elements, or the closing
// byte, reporting whether it was the closing one.
func (s *readingScanner) next(closing byte) (bool, error) {
	s.space()
	if s.i >= len(s.b) {
		return false, errSyntax
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		return false, nil
	case closing:
		s.i++
		return true, nil
	}
	return false, errSyntax
}

// str consumes a string, returning its bytes between the quotes and
// whether they hold an escape.
func (s *readingScanner) str() (raw []byte, escaped bool, err error) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false, errSyntax
	}
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		switch s.b[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			s.i = j + 1
			return s.b[start:j], escaped, nil
		}
	}
	return nil, false, errSyntax
}

// object walks the members of an object whose '{' was consumed.
func (s *readingScanner) object(ti typeInfo, depth int) error {
	var seenBuf [16][]byte
	seen := seenBuf[:0] // objects are small; a map past a few dozen members
	var seenMap map[string]bool
	s.space()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return nil
	}
	for {
		s.space()
		raw, escaped, err := s.str()
		if err != nil {
			return err
		}
		name := raw
		if escaped {
			var u string
			if json.Unmarshal(s.b[s.i-len(raw)-2:s.i], &u) != nil {
				return errSyntax
			}
			name = []byte(u)
		}
		if seenMap != nil {
			if seenMap[string(name)] {
				return fmt.Errorf("the member %q appears twice in one object", name)
			}
			seenMap[string(name)] = true
		} else {
			for _, n := range seen {
				if bytes.Equal(n, name) {
					return fmt.Errorf("the member %q appears twice in one object", name)
				}
			}
			if seen = append(seen, name); len(seen) > 32 {
				seenMap = make(map[string]bool, 2*len(seen))
				for _, n := range seen {
					seenMap[string(n)] = true
				}
			}
		}
		var vt reflect.Type
		if t := ti.shape; t != nil {
			switch t.Kind() {
			case reflect.Struct:
				ft, declared := ti.member(name)
				if ft == nil && declared != "" {
					return fmt.Errorf("member names are case-sensitive: %q is not %q", name, declared)
				}
				vt = ft // an unknown member is the decoder's to refuse
			case reflect.Map:
				vt = t.Elem()
			}
		}
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return errSyntax
		}
		s.i++
		if err := s.value(vt, depth); err != nil {
			return err
		}
		if end, err := s.next('}'); end || err != nil {
			return err
		}
	}
}
