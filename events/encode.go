package events

import (
	"encoding/json"
	"strconv"

	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// The builders write their payloads by hand, member by member, rather than
// through encoding/json: the result is the canonical form logbook stores
// (docs/format.md), byte for byte, which encoding/json does not produce
// (it escapes U+2028 and U+2029, and optional members would need a struct
// per shape to keep their order). Strings go through jsonv.AppendString,
// the canonical string encoder logbook itself uses.
//
// Caller-supplied JSON (stream records, tool parameters, meta, extra
// members) is canonicalized when it is valid and written as given when it
// is not, so that Append rejects it with the JSON rule it breaks.

// str appends the canonical JSON string s.
func str(b []byte, s string) []byte { return jsonv.AppendString(b, s) }

// num appends the integer n.
func num(b []byte, n int64) []byte { return strconv.AppendInt(b, n, 10) }

// member appends `,"name":` (or `"name":` right after an opening brace).
func member(b []byte, name string) []byte {
	if len(b) > 0 && b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	b = str(b, name)
	return append(b, ':')
}

// strMember appends the member name with the string value s.
func strMember(b []byte, name, s string) []byte { return str(member(b, name), s) }

// numMember appends the member name with the integer value n.
func numMember(b []byte, name string, n int64) []byte { return num(member(b, name), n) }

// turnStep opens an object with the turn and step members.
func turnStep(turn, step int) []byte {
	b := numMember([]byte{'{'}, "turn", int64(turn))
	return numMember(b, "step", int64(step))
}

// value appends the caller's JSON value v: canonical when v is valid JSON,
// verbatim (for Append to reject) when it is not. An empty v is null, as
// encoding/json marshals it.
func value(b []byte, v json.RawMessage) []byte {
	if len(v) == 0 {
		return append(b, "null"...)
	}
	if out, _, err := jsonv.AppendParse(b, v, jsonv.Options{}); err == nil {
		return out
	}
	return append(b, v...)
}

// values appends the JSON array of vs; nil is the empty array.
func values(b []byte, vs []json.RawMessage) []byte {
	b = append(b, '[')
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = value(b, v)
	}
	return append(b, ']')
}

// extra appends the members of the caller's JSON object obj to the object
// being written (which has at least one member already). Empty obj and {}
// add nothing; anything else that is not an object is written verbatim
// after a comma, which no JSON parser accepts, so Append rejects it.
func extra(b []byte, obj json.RawMessage) []byte {
	if len(obj) == 0 {
		return b
	}
	doc, err := jsonv.Parse(obj, jsonv.Options{})
	if err != nil || doc.Root().Kind() != jsonv.Object {
		b = append(b, ',')
		return append(b, obj...)
	}
	if doc.Root().Len() == 0 {
		return b
	}
	canon := doc.Buffer()
	b = append(b, ',')
	return append(b, canon[1:len(canon)-1]...)
}
