package authz

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// refDecodeObject is the reference for parseObject: encoding/json's
// decoder, member by member, refusing anything but one object, trailing
// data and duplicate names.
func refDecodeObject(data []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	members := make(map[string]json.RawMessage)
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, ok := t.(string)
		if !ok {
			return nil, errors.New("not a member name")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if _, dup := members[name]; dup {
			return nil, errors.New("duplicate member name")
		}
		members[name] = v
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, errors.New("unterminated object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data")
	}
	return members, nil
}

// refNumericDate is numericDate through encoding/json.
func refNumericDate(raw json.RawMessage) (time.Time, error) {
	var f float64
	if len(raw) == 0 || !(raw[0] == '-' || ('0' <= raw[0] && raw[0] <= '9')) {
		return time.Time{}, errors.New("not a number")
	}
	if err := json.Unmarshal(raw, &f); err != nil || math.IsNaN(f) || f < 0 || f > 1<<40 {
		return time.Time{}, errors.New("not a valid date")
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)), nil
}

// checkSameAsReference fails t unless parseObject, and reading every member
// as a string, an array of strings and a date, agree with encoding/json.
func checkSameAsReference(t *testing.T, data []byte) {
	t.Helper()
	var buf [4]jsonMember
	got, err := parseObject(data, buf[:0])
	want, werr := refDecodeObject(data)
	if (err == nil) != (werr == nil) {
		t.Fatalf("parseObject(%q) error %v, encoding/json %v", data, err, werr)
	}
	if err != nil {
		return
	}
	if len(got) != len(want) {
		t.Fatalf("parseObject(%q): %d members, encoding/json %d", data, len(got), len(want))
	}
	for name, wraw := range want {
		raw, ok := member(got, name)
		if !ok || !bytes.Equal(raw, wraw) {
			t.Fatalf("parseObject(%q): member %q = %q, %v; encoding/json %q", data, name, raw, ok, wraw)
		}
		// As a string.
		s, serr := jsonString(raw)
		var ws string
		wserr := error(nil)
		if len(wraw) == 0 || wraw[0] != '"' {
			wserr = errors.New("not a string")
		} else {
			wserr = json.Unmarshal(wraw, &ws)
		}
		if (serr == nil) != (wserr == nil) || (serr == nil && string(s) != ws) {
			t.Fatalf("string %q = %q, %v; encoding/json %q, %v", raw, s, serr, ws, wserr)
		}
		// As an array.
		elems, aerr := parseArray(raw, nil, -1)
		var welems []json.RawMessage
		waerr := error(nil)
		if len(wraw) == 0 || wraw[0] != '[' {
			waerr = errors.New("not an array")
		} else {
			waerr = json.Unmarshal(wraw, &welems)
		}
		if (aerr == nil) != (waerr == nil) || len(elems) != len(welems) {
			t.Fatalf("array %q = %q, %v; encoding/json %q, %v", raw, elems, aerr, welems, waerr)
		}
		for i := range elems {
			if !bytes.Equal(elems[i], welems[i]) {
				t.Fatalf("array %q element %d = %q; encoding/json %q", raw, i, elems[i], welems[i])
			}
		}
		// As a date.
		d, ok, derr := numericDate(got, name)
		wd, wderr := refNumericDate(wraw)
		if ok != (derr == nil) || (derr == nil) != (wderr == nil) || !d.Equal(wd) {
			t.Fatalf("date %q = %v, %v; encoding/json %v, %v", raw, d, derr, wd, wderr)
		}
	}
}

// TestParseObject: the JWT's header and claims are read exactly as
// encoding/json reads them, duplicates and trailing data refused.
func TestParseObject(t *testing.T) {
	many := func(n int, dup bool) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`"m` + strconv.Itoa(i) + `":` + strconv.Itoa(i))
		}
		if dup {
			b.WriteString(`,"m7":"again"`)
		}
		b.WriteString("}")
		return b.String()
	}
	tests := []struct {
		in string
		ok bool
	}{
		{`{}`, true},
		{" \t\r\n{ } \n", true},
		{`{"a":1,"b":"x","c":[1,"]",{"d":"}"}],"e":{"f":null},"g":true,"h":false,"i":-1.5e3}`, true},
		{`{"a":"\"quoted\" \\ \/ \u00e9 \ud83d\ude00"}`, true},
		{`{"s\u0075b":"x","sub":"y"}`, false}, // the same name twice
		{`{"a":1,"a":2}`, false},
		{`{"\ufffd":1,"` + "\xff" + `":2}`, false}, // invalid UTF-8 decodes to U+FFFD
		{`{"a":"` + "\xff\xfe" + `"}`, true},
		{`{"a":"` + "\x80" + `","b":"` + "\x7f" + `"}`, true},
		{`{"a":1} {}`, false},
		{`{"a":1}x`, false},
		{`[1]`, false},
		{`"x"`, false},
		{`null`, false},
		{``, false},
		{`{`, false},
		{`{"a"}`, false},
		{`{"a":}`, false},
		{`{"a":1,}`, false},
		{`{'a':1}`, false},
		{"{\"a\":\"\x01\"}", false},
		{`{"a":01}`, false},
		{`{"d":1e400}`, true},
		{`{"d":1700000000.25,"e":-0,"f":1099511627777,"g":"7"}`, true},
		{`{"d":1099511627776,"e":1099511627775.5,"f":-1e-400,"g":1e-400}`, true},
		{many(32, false), true},
		{many(33, false), true},
		{many(500, false), true},
		{many(500, true), false},
		{many(10, true), false},
	}
	for _, tt := range tests {
		t.Run(tt.in[:min(len(tt.in), 40)], func(t *testing.T) {
			checkSameAsReference(t, []byte(tt.in))
			_, err := parseObject([]byte(tt.in), nil)
			if (err == nil) != tt.ok {
				t.Errorf("parseObject error %v, want ok %v", err, tt.ok)
			}
		})
	}
}

// FuzzParseObject: whatever the input, parseObject and the string, array
// and date readers agree with encoding/json, and do not panic.
func FuzzParseObject(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"a":1,"b":"x","c":[1,"]",{"d":"}"}],"e":{"f":null}}`, `{"s\u0075b":"x","sub":"y"}`,
		`{"a":"\"q\" \\ \u00e9"}`, `{"a":[" \"",2]}`, `{"d":1e400,"e":-0.5,"f":17e8}`, `{"a":1} {}`, "{\"\xff\":1}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkSameAsReference(t, data)
	})
}

// TestTypAllowed: typ is compared as strings.ToLower and TrimPrefix did.
func TestTypAllowed(t *testing.T) {
	for _, typ := range []string{"", "JWT", "jwt", "Jwt", "at+jwt", "AT+JWT", "application/jwt", "Application/At+JWT",
		"application/", "application/application/jwt", "logout+jwt", "jwt ", "JWT\u0130", "\u212awt", "ja\u0307wt"} {
		low := strings.TrimPrefix(strings.ToLower(typ), "application/")
		want := low == "" || low == "jwt" || low == "at+jwt"
		if got := typAllowed([]byte(typ)); got != want {
			t.Errorf("typAllowed(%q) = %v, want %v", typ, got, want)
		}
	}
}

// TestParseArrayLimit: the limit counts the elements of this array, not
// what dst already holds.
func TestParseArrayLimit(t *testing.T) {
	dst := [][]byte{[]byte(`"x"`), []byte(`"y"`)}
	for _, tt := range []struct {
		in    string
		limit int
		n     int
		ok    bool
	}{
		{`[]`, 0, 0, true},
		{`[1]`, 0, 0, false},
		{`[1, "a", [2]]`, 3, 3, true},
		{`[1, "a", [2]]`, 2, 0, false},
		{` [1, {"b": [3, "]"]}] `[1:], -1, 2, true},
	} {
		got, err := parseArray([]byte(tt.in), dst[:2:2], tt.limit)
		if (err == nil) != tt.ok || (err == nil && len(got) != 2+tt.n) {
			t.Errorf("parseArray(%s, limit %d) = %q, %v", tt.in, tt.limit, got, err)
		}
	}
}
