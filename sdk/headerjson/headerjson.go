// Package headerjson encodes and decodes the canonical session header JSON of
// docs/storage.md: the JSONL header line, the SQLite header column and the wire
// form of the persistence protocol (docs/plugins.md).
package headerjson

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// Encode renders h as the canonical session header JSON of docs/storage.md
// (the JSONL header line without its newline, the SQLite header column and
// the wire form of docs/plugins.md): members in canonical order, optional members only
// when set, "protocol" only for a lenient session (strict, the default, is
// stored as no member), "labels" only when there are some (keys sorted),
// inheritedEventCount only when seeded.
func Encode(h sdk.Header) []byte {
	version := h.FormatVersion
	if version == 0 {
		version = sdk.FormatVersion
	}
	b := []byte(`{"type":"session","version":`)
	b = strconv.AppendInt(b, int64(version), 10)
	b = append(b, `,"id":`...)
	b = jsonv.AppendString(b, h.ID)
	if h.Tenant != "" {
		b = append(b, `,"tenant":`...)
		b = jsonv.AppendString(b, h.Tenant)
	}
	b = append(b, `,"createdAt":`...)
	b = strconv.AppendInt(b, h.CreatedAt, 10)
	b = append(b, `,"isSeeded":`...)
	b = strconv.AppendBool(b, h.IsSeeded)
	b = append(b, `,"delegationDepth":`...)
	b = strconv.AppendInt(b, h.DelegationDepth, 10)
	for _, m := range [...]struct{ name, val string }{{"cwd", h.CWD}, {"parentSession", h.ParentSession}, {"origin", h.Origin}, {"agentPreset", h.AgentPreset}} {
		if m.val != "" {
			b = append(b, `,"`+m.name+`":`...)
			b = jsonv.AppendString(b, m.val)
		}
	}
	if h.Protocol == sdk.ProtocolLenient {
		b = append(b, `,"protocol":"lenient"`...)
	}
	if len(h.Labels) > 0 {
		b = append(b, `,"labels":`...)
		for i, k := range slices.Sorted(maps.Keys(h.Labels)) {
			b = append(b, "{,"[min(i, 1)])
			b = jsonv.AppendString(b, k)
			b = append(b, ':')
			b = jsonv.AppendString(b, h.Labels[k])
		}
		b = append(b, '}')
	}
	if h.IsSeeded {
		b = append(b, `,"inheritedEventCount":`...)
		b = strconv.AppendInt(b, h.InheritedEventCount, 10)
	}
	return append(b, '}')
}

var headerMembers = map[string]bool{
	"type": true, "version": true, "id": true, "createdAt": true, "isSeeded": true, "delegationDepth": true,
	"cwd": true, "parentSession": true, "origin": true, "agentPreset": true, "inheritedEventCount": true,
}

// since is the first format version whose header may hold each member
// added after version 1; in an older header it is an unknown member.
var since = map[string]int{"protocol": 2, "labels": 3, "tenant": 5}

// Decode reads a stored session header (docs/storage.md, docs/format.md): the format
// gate on the raw version first (FORMAT_TOO_NEW, FORMAT_UNSUPPORTED), then the
// identity check against wantID when it is not "" (IDENTITY_MISMATCH), then
// the shape rules (CORRUPT_LOG naming the member: "protocol" is a member
// from format version 2 on, and its one stored value is "lenient";
// "labels" is one from version 3 on, a non-empty object that follows
// sdk.ValidateLabels, keys in sorted order). The
// header keeps the stored version; Migrate brings it to the current one.
// artifact names the file or database in messages.
func Decode(b []byte, wantID, artifact string) (sdk.Header, error) {
	corrupt := func(format string, args ...any) (sdk.Header, error) {
		e := sdk.Errorf(sdk.CodeCorruptLog, "header", format, args...)
		if artifact != "" {
			e.Detail += " (" + artifact + ")"
		}
		e.SessionID = wantID
		return sdk.Header{}, e
	}
	if len(b) == 0 {
		return corrupt("the session header is empty")
	}
	doc, err := jsonv.Parse(b, jsonv.Options{})
	if err != nil {
		return corrupt("the session header is not lossless JSON: %v", err)
	}
	root := doc.Root()
	if root.Kind() != jsonv.Object {
		return corrupt("the session header is not a JSON object")
	}
	id, _ := root.Get("id").Str()
	ver := root.Get("version")
	switch {
	case !ver.Exists() && root.Get("seq").Exists():
		return corrupt(`the session header is missing: in its place is an event, %s; a log starts with the header {"type":"session","version":1,…}`, clip(b))
	case !ver.Exists():
		return corrupt(`the session header has no "version" member`)
	case ver.Kind() != jsonv.Number:
		return corrupt(`the session header's "version" must be a number; got %s`, ver.Bytes())
	}
	v, err := sdk.CheckFormatVersion(id, ver.Literal(), artifact)
	if err != nil {
		return sdk.Header{}, err
	}
	if wantID != "" && root.Get("id").Kind() == jsonv.String && id != wantID {
		e := sdk.Errorf(sdk.CodeIdentityMismatch, "header", "requested session %s but the stored header names %s", strconv.Quote(wantID), strconv.Quote(id))
		e.SessionID = wantID
		return sdk.Header{}, e
	}
	for k := range root.Members() {
		name, _ := k.Str()
		if v0, ok := since[name]; !headerMembers[name] && (!ok || v < v0) {
			return corrupt("unknown header member %s", strconv.Quote(name))
		}
	}
	if !root.Get("type").StrEqual("session") {
		return corrupt(`header member "type" must be "session"; got %s`, root.Get("type").Bytes())
	}
	if root.Get("id").Kind() != jsonv.String {
		return corrupt(`header member "id" must be a string`)
	}
	h := sdk.Header{FormatVersion: v, ID: id}
	intMember := func(name string, required bool) (int64, bool, error) {
		m := root.Get(name)
		if !m.Exists() {
			if required {
				_, err := corrupt("header member %q is missing", name)
				return 0, false, err
			}
			return 0, false, nil
		}
		n, ok := m.Int()
		if !ok || n < 0 {
			_, err := corrupt("header member %q must be an integer-form number in 0 … 2^53−1; got %s", name, m.Bytes())
			return 0, false, err
		}
		return n, true, nil
	}
	var err2 error
	if h.CreatedAt, _, err2 = intMember("createdAt", true); err2 != nil {
		return sdk.Header{}, err2
	}
	if h.DelegationDepth, _, err2 = intMember("delegationDepth", true); err2 != nil {
		return sdk.Header{}, err2
	}
	seeded, ok := root.Get("isSeeded").Bool()
	if !ok {
		return corrupt(`header member "isSeeded" must be a boolean`)
	}
	h.IsSeeded = seeded
	count, present, err2 := intMember("inheritedEventCount", false)
	if err2 != nil {
		return sdk.Header{}, err2
	}
	if present != seeded {
		return corrupt("inheritedEventCount must be present exactly when isSeeded is true")
	}
	h.InheritedEventCount = count
	for _, m := range [...]struct {
		name string
		dst  *string
	}{{"cwd", &h.CWD}, {"parentSession", &h.ParentSession}, {"origin", &h.Origin}, {"agentPreset", &h.AgentPreset}} {
		v := root.Get(m.name)
		if !v.Exists() {
			continue
		}
		s, ok := v.Str()
		if !ok {
			return corrupt("header member %q must be a string", m.name)
		}
		*m.dst = s
	}
	if p := root.Get("protocol"); p.Exists() {
		if !p.StrEqual(sdk.ProtocolLenient) {
			return corrupt(`header member "protocol" must be "lenient" when present (a strict session has no member); got %s`, p.Bytes())
		}
		h.Protocol = sdk.ProtocolLenient
	}
	if t := root.Get("tenant"); t.Exists() {
		name, ok := t.Str()
		if !ok || name == sdk.DefaultTenant || sdk.ValidateTenant(name) != nil {
			return corrupt(`header member "tenant" must be a tenant name other than %q (the implicit tenant has no member); got %s`, sdk.DefaultTenant, t.Bytes())
		}
		h.Tenant = name
	}
	if l := root.Get("labels"); l.Exists() {
		if h.Labels, err = decodeLabels(l); err != nil {
			return corrupt("%v", err)
		}
	}
	if h.CWD != "" && h.CWD[0] != '/' {
		return corrupt("header cwd %s is not absolute", strconv.Quote(h.CWD))
	}
	if h.Origin != "" && h.Origin != "subagent" {
		return corrupt(`header origin must be "subagent" when present; got %s`, strconv.Quote(h.Origin))
	}
	return h, nil
}

// Migrate brings h, decoded by Decode from the stored header raw, to the
// current format version (docs/format.md "Format versions"): it runs the
// header stages of the sdk.Migrations chain (migrateHeader) and decodes the
// result. It returns h and raw themselves when h is current. The caller
// stores the migrated header (an open for write) or only serves it (an
// open for read).
func Migrate(h sdk.Header, raw []byte, artifact string) (sdk.Header, []byte, error) {
	if h.FormatVersion == sdk.FormatVersion {
		return h, raw, nil
	}
	out, err := migrateHeader(h.ID, h.FormatVersion, raw)
	if err != nil {
		return sdk.Header{}, nil, err
	}
	m, err := Decode(out, h.ID, artifact)
	if err != nil {
		return sdk.Header{}, nil, sdk.Wrapf(sdk.CodeFormatMigrationRefused, "header", err, "the migrated header does not read back").WithSession(h.ID)
	}
	return m, out, nil
}

// migrateHeader runs the edges of sdk.Migrations from version from up to
// sdk.FormatVersion over header, the stored header JSON of session id:
// each sets the "version" member to its To (setVersion), then runs its
// Header stage if it has one. Every edge on the way must keep the
// envelopes byte-exact (Events nil), as the backends of this build store a
// migration by replacing the header alone; an edge that does not, or a
// header an edge cannot migrate, is FORMAT_MIGRATION_REFUSED naming the
// edge.
func migrateHeader(id string, from int, header []byte) ([]byte, error) {
	for _, e := range sdk.Migrations() {
		if e.From < from {
			continue
		}
		if e.Events != nil {
			return nil, sdk.Errorf(sdk.CodeFormatMigrationRefused, "format", "session %s: migration v%d→v%d rewrites events, and this build stores header migrations only", strconv.Quote(id), e.From, e.To).WithSession(id)
		}
		var err error
		header, err = setVersion(header, e.To)
		if err == nil && e.Header != nil {
			header, err = e.Header(header)
		}
		if err != nil {
			return nil, sdk.Wrapf(sdk.CodeFormatMigrationRefused, "format", err, "session %s: migration v%d→v%d", strconv.Quote(id), e.From, e.To).WithSession(id)
		}
	}
	return header, nil
}

// setVersion returns header, parsed losslessly (sdk/jsonv), in its
// canonical encoding with the top-level "version" member's value replaced
// by v: a canonical header, as every stored one is, keeps every other byte.
func setVersion(header []byte, v int) ([]byte, error) {
	buf, doc, err := jsonv.AppendParse(nil, header, jsonv.Options{})
	if err != nil {
		return nil, fmt.Errorf("the header is not lossless JSON: %w", err)
	}
	root := doc.Root()
	if root.Kind() != jsonv.Object {
		return nil, errors.New("the header is not a JSON object")
	}
	ver := root.Get("version")
	if ver.Kind() != jsonv.Number {
		return nil, errors.New(`the header has no numeric "version" member`)
	}
	start, end := ver.Span()
	out := append(buf[:start:start], strconv.Itoa(v)...)
	return append(out, buf[end:]...), nil
}

// decodeLabels reads a stored "labels" member: a non-empty object of
// strings, keys in sorted order, following sdk.ValidateLabels.
func decodeLabels(l jsonv.Value) (map[string]string, error) {
	if l.Kind() != jsonv.Object {
		return nil, errors.New(`header member "labels" must be an object of strings`)
	}
	labels := map[string]string{}
	prev := ""
	for k, v := range l.Members() {
		key, _ := k.Str()
		val, ok := v.Str()
		switch {
		case !ok:
			return nil, fmt.Errorf(`header member "labels": label %s must be a string; got %s`, strconv.Quote(key), v.Bytes())
		case len(labels) > 0 && key <= prev:
			return nil, fmt.Errorf(`header member "labels": key %s is out of sorted order or repeated`, strconv.Quote(key))
		}
		labels[key], prev = val, key
	}
	if len(labels) == 0 {
		return nil, errors.New(`header member "labels" must not be empty (a session without labels has no member)`)
	}
	if err := sdk.ValidateLabels("header", labels); err != nil {
		var e *sdk.Error
		if errors.As(err, &e) {
			return nil, fmt.Errorf(`header member "labels": %s`, e.Detail)
		}
		return nil, err
	}
	return labels, nil
}

// clip returns b for a message, cut after 96 bytes (marked "…").
func clip(b []byte) string {
	if len(b) > 96 {
		return string(b[:96]) + "…"
	}
	return string(b)
}
