package metasrv

import (
	"strconv"
	"unicode/utf8"

	"lakegate/catalog"
)

// appendEvent appends e as the JSON line json.Encoder.Encode writes for it
// (json.Marshal plus '\n'), without reflection, and reports true; it
// reports false, having appended nothing of use, when e holds anything it
// does not produce byte for byte itself (a string needing escapes, an
// unnamed object type, a Lake operation, a Command it cannot copy
// verbatim), and the caller then encodes e with encoding/json.
//
// commandValid says that e.Command, if set, is known to be valid JSON (the
// FSM decoded it): a valid value without JSON whitespace, '<', '>', '&' or
// the byte 0xE2 (U+2028, U+2029) is what encoding/json's compaction with
// HTML escaping writes for it, unchanged.
func appendEvent(b []byte, e *Event, commandValid bool) ([]byte, bool) {
	if e.Lake != nil || (len(e.Command) > 0 && (!commandValid || !verbatimJSON(e.Command))) {
		return b, false
	}
	var ok bool
	b = append(b, `{"metalake":`...)
	if b, ok = appendSimpleString(b, e.Metalake); !ok {
		return b, false
	}
	b = append(b, `,"index":`...)
	b = strconv.AppendUint(b, e.Index, 10)
	b = append(b, `,"time":"`...)
	b, err := e.Time.AppendText(b) // as Time.MarshalJSON, unquoted
	if err != nil {
		return b, false
	}
	b = append(b, `","actor":`...)
	if b, ok = appendSimpleString(b, e.Actor); !ok {
		return b, false
	}
	b = append(b, `,"operation":`...)
	if b, ok = appendSimpleString(b, e.Operation); !ok {
		return b, false
	}
	b = append(b, `,"target":{"type":`...)
	typ := ""
	if e.Target.Type != 0 {
		if !knownObjectType(e.Target.Type) {
			return b, false // MarshalText fails: let encoding/json report it
		}
		typ = e.Target.Type.String()
	}
	if b, ok = appendSimpleString(b, typ); !ok {
		return b, false
	}
	b = append(b, `,"fullName":`...)
	if b, ok = appendSimpleString(b, e.Target.Name); !ok {
		return b, false
	}
	b = append(b, `},"outcome":`...)
	if b, ok = appendSimpleString(b, string(e.Outcome)); !ok {
		return b, false
	}
	if e.Detail != "" {
		b = append(b, `,"detail":`...)
		if b, ok = appendSimpleString(b, e.Detail); !ok {
			return b, false
		}
	}
	for _, f := range [...]struct{ key, value string }{
		{`,"delegator":`, e.Delegator}, {`,"request":`, e.Request}, {`,"reason":`, e.Reason},
	} {
		if f.value == "" {
			continue
		}
		b = append(b, f.key...)
		if b, ok = appendSimpleString(b, f.value); !ok {
			return b, false
		}
	}
	if len(e.Command) > 0 {
		b = append(b, `,"command":`...)
		b = append(b, e.Command...)
	}
	return append(b, "}\n"...), true
}

// knownObjectType reports whether t has a name (ObjectType.MarshalText
// succeeds with a non-empty text).
func knownObjectType(t catalog.ObjectType) bool {
	_, err := t.MarshalText()
	return err == nil
}

// appendSimpleString appends s as a JSON string when no byte of it needs
// escaping by encoding/json (printable ASCII other than '"', '\\', '<', '>'
// and '&', or UTF-8 sequences other than U+2028 and U+2029), and reports
// false otherwise.
func appendSimpleString(b []byte, s string) ([]byte, bool) {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				return b, false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			return b, false
		}
		i += size
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), true
}

// verbatimJSON reports whether valid JSON raw contains none of the bytes
// that encoding/json's compaction with HTML escaping would drop or rewrite:
// JSON whitespace, '<', '>', '&', and 0xE2 (which starts U+2028 and U+2029).
func verbatimJSON(raw []byte) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r', '<', '>', '&', 0xE2:
			return false
		}
	}
	return true
}
