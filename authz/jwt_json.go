package authz

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// The JWT's header and claims are read by a small scanner over input that
// encoding/json has first validated (json.Valid, which does not allocate):
// it splits one object into members without building a map or decoding
// values it does not need, and decodes the values it reads in place. It
// refuses what the strict decoding requires: anything but one object,
// trailing data and duplicate member names (compared after unescaping, as
// encoding/json decodes them).

// jsonMember is one member of a JSON object: its name, unescaped, and its
// value exactly as it appears in the document (without surrounding space).
type jsonMember struct {
	name []byte
	raw  []byte
}

// maxPairwise is the largest object whose names are checked for duplicates
// pair by pair; larger ones are sorted first, so that a crafted payload of
// thousands of members costs n log n, not n².
const maxPairwise = 32

var (
	errNotObject = errors.New("not a JSON object")
	errDuplicate = errors.New("duplicate member name")
	errNotString = errors.New("not a string")
	errNotArray  = errors.New("not an array")
	errTooMany   = errors.New("too many elements")
)

// parseObject parses data, which must be one JSON object and nothing else
// (space around it aside), appending its members to dst in document order
// (for more than maxPairwise members, in name order). Member values are
// slices of data.
func parseObject(data []byte, dst []jsonMember) ([]jsonMember, error) {
	if !json.Valid(data) {
		return nil, errors.New("not valid JSON")
	}
	// From here data is valid JSON: the scanner still checks its bounds, so
	// that a mistake in it refuses input rather than panics.
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, errNotObject
	}
	members := dst
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return members, nil
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return nil, errNotObject
		}
		end := valueEnd(data, i)
		if end < 0 {
			return nil, errNotObject
		}
		name, err := jsonString(data[i:end])
		if err != nil {
			return nil, err
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return nil, errNotObject
		}
		i = skipSpace(data, i+1)
		end = valueEnd(data, i)
		if end < 0 {
			return nil, errNotObject
		}
		members = append(members, jsonMember{name: name, raw: data[i:end]})
		i = skipSpace(data, end)
		if i >= len(data) {
			return nil, errNotObject
		}
		if data[i] == '}' {
			break
		}
		if data[i] != ',' {
			return nil, errNotObject
		}
		i = skipSpace(data, i+1)
	}
	if hasDuplicateName(members[len(dst):]) {
		return nil, errDuplicate
	}
	return members, nil
}

// hasDuplicateName reports whether two members share a name; it may sort
// members by name.
func hasDuplicateName(members []jsonMember) bool {
	if len(members) <= maxPairwise {
		for i := range members {
			for k := i + 1; k < len(members); k++ {
				if bytes.Equal(members[i].name, members[k].name) {
					return true
				}
			}
		}
		return false
	}
	slices.SortFunc(members, func(a, b jsonMember) int { return bytes.Compare(a.name, b.name) })
	for i := 1; i < len(members); i++ {
		if bytes.Equal(members[i-1].name, members[i].name) {
			return true
		}
	}
	return false
}

// parseArray appends the elements of the JSON array raw (a value from
// parseObject, so valid JSON) to dst, refusing more than limit elements.
func parseArray(raw []byte, dst [][]byte, limit int) ([][]byte, error) {
	if len(raw) == 0 || raw[0] != '[' {
		return nil, errNotArray
	}
	elems := dst
	i := skipSpace(raw, 1)
	if i < len(raw) && raw[i] == ']' {
		return elems, nil
	}
	for {
		end := valueEnd(raw, i)
		if end < 0 {
			return nil, errNotArray
		}
		if len(elems)-len(dst) == limit {
			return nil, errTooMany
		}
		elems = append(elems, raw[i:end])
		i = skipSpace(raw, end)
		if i >= len(raw) {
			return nil, errNotArray
		}
		if raw[i] == ']' {
			return elems, nil
		}
		if raw[i] != ',' {
			return nil, errNotArray
		}
		i = skipSpace(raw, i+1)
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// valueEnd returns the index just past the JSON value starting at data[i],
// or -1 if it does not end within data.
func valueEnd(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		for j := i + 1; j < len(data); j++ {
			switch data[j] {
			case '\\':
				j++ // the escaped byte is never the closing quote
			case '"':
				return j + 1
			}
		}
		return -1
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end := valueEnd(data, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default: // a number, true, false or null
		j := i
		for j < len(data) {
			switch data[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return j
			}
			j++
		}
		return j
	}
}

// jsonString returns the decoded content of the JSON string raw. Strings of
// printable ASCII without escapes (the claims this reads, in practice) are
// returned in place; any other is decoded by encoding/json, so escapes and
// invalid UTF-8 mean what they mean there.
func jsonString(raw []byte) ([]byte, error) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, errNotString
	}
	in := raw[1 : len(raw)-1]
	plain := true
	for _, c := range in {
		if c == '\\' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		return in, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return []byte(s), nil
}

// member returns the raw value of the member name.
func member(members []jsonMember, name string) ([]byte, bool) {
	for i := range members {
		if string(members[i].name) == name {
			return members[i].raw, true
		}
	}
	return nil, false
}

// stringMember returns the decoded string member name; ok is false when it
// is absent, err set when it is not a string.
func stringMember(members []jsonMember, name string) (s []byte, ok bool, err error) {
	raw, ok := member(members, name)
	if !ok {
		return nil, false, nil
	}
	s, err = jsonString(raw)
	return s, true, err
}

// numericDate reads a NumericDate claim (seconds since the epoch, RFC 7519).
func numericDate(members []jsonMember, name string) (time.Time, bool, error) {
	raw, ok := member(members, name)
	if !ok {
		return time.Time{}, false, nil
	}
	if len(raw) == 0 || !(raw[0] == '-' || ('0' <= raw[0] && raw[0] <= '9')) {
		return time.Time{}, false, errors.New("not a number")
	}
	// raw is a valid JSON number, whose syntax ParseFloat accepts as
	// encoding/json does.
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > 1<<40 {
		return time.Time{}, false, errors.New("not a valid date")
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)), true, nil
}

// cmpStringBytes is strings.Compare(s, string(b)) without the conversion.
func cmpStringBytes(s string, b []byte) int {
	n := min(len(s), len(b))
	for i := 0; i < n; i++ {
		switch {
		case s[i] < b[i]:
			return -1
		case s[i] > b[i]:
			return 1
		}
	}
	switch {
	case len(s) < len(b):
		return -1
	case len(s) > len(b):
		return 1
	}
	return 0
}
