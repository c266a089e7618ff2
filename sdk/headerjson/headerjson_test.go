package headerjson

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// current is header JSON h, written with the version 3 member, as this
// build writes it: with the current format version.
func current(h string) string {
	return strings.Replace(h, `"version":3`, `"version":`+strconv.Itoa(sdk.FormatVersion), 1)
}

func TestHeaderRoundTrip(t *testing.T) {
	for _, h := range []sdk.Header{
		{FormatVersion: 1, ID: "s1", CreatedAt: 1700000000000},
		{FormatVersion: 2, ID: "lenient", CreatedAt: 9, Protocol: sdk.ProtocolLenient},
		{FormatVersion: 2, ID: "c\"hild", CreatedAt: 5, Protocol: sdk.ProtocolLenient, CWD: "/work", ParentSession: "s1", Origin: "subagent", DelegationDepth: 2, AgentPreset: "coder", IsSeeded: true, InheritedEventCount: 6},
		{FormatVersion: 3, ID: "labelled", CreatedAt: 5, Labels: map[string]string{"framework": "openai-agents", "key": "a\"b\u00e9\u2028", "0.x/y_z-": ""}, IsSeeded: true, InheritedEventCount: 1},
	} {
		b := Encode(h)
		got, err := Decode(b, h.ID, "")
		if err != nil || !got.Equal(h) {
			t.Fatalf("round trip of %s: %+v %v", b, got, err)
		}
	}
	if got := string(Encode(sdk.Header{ID: "s", CreatedAt: 1})); got != current(`{"type":"session","version":3,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0}`) {
		t.Fatalf("canonical header: %s", got)
	}
	// Labels after protocol, keys sorted; none is no member.
	if got := string(Encode(sdk.Header{ID: "s", CreatedAt: 1, Protocol: sdk.ProtocolLenient, Labels: map[string]string{"z": "1", "a": "2"}, IsSeeded: true, InheritedEventCount: 3})); got != current(`{"type":"session","version":3,"id":"s","createdAt":1,"isSeeded":true,"delegationDepth":0,"protocol":"lenient","labels":{"a":"2","z":"1"},"inheritedEventCount":3}`) {
		t.Fatalf("canonical labelled header: %s", got)
	}
	if got := string(Encode(sdk.Header{ID: "s", CreatedAt: 1, Labels: map[string]string{}})); strings.Contains(got, "labels") {
		t.Fatalf("empty labels are stored: %s", got)
	}
	// The member order of docs/storage.md: protocol after the optional
	// strings, before inheritedEventCount.
	if got := string(Encode(sdk.Header{ID: "s", CreatedAt: 1, AgentPreset: "p", Protocol: sdk.ProtocolLenient, IsSeeded: true, InheritedEventCount: 3})); got != current(`{"type":"session","version":3,"id":"s","createdAt":1,"isSeeded":true,"delegationDepth":0,"agentPreset":"p","protocol":"lenient","inheritedEventCount":3}`) {
		t.Fatalf("canonical lenient header: %s", got)
	}
	// Strict, given or not, is stored as no member.
	if got := string(Encode(sdk.Header{ID: "s", CreatedAt: 1, Protocol: sdk.ProtocolStrict})); strings.Contains(got, "protocol") {
		t.Fatalf("a strict header names its protocol: %s", got)
	}
}

func TestMigrateV1Header(t *testing.T) {
	v1 := []byte(`{"type":"session","version":1,"id":"s","createdAt":1,"isSeeded":true,"delegationDepth":0,"cwd":"/w","inheritedEventCount":4}`)
	h, err := Decode(v1, "s", "")
	if err != nil || h.FormatVersion != 1 {
		t.Fatalf("Decode(v1) = %+v, %v", h, err)
	}
	m, raw, err := Migrate(h, v1, "")
	want := sdk.Header{FormatVersion: sdk.FormatVersion, ID: "s", CreatedAt: 1, IsSeeded: true, CWD: "/w", InheritedEventCount: 4}
	if err != nil || !m.Equal(want) || string(raw) != string(Encode(want)) {
		t.Fatalf("Migrate(v1) = %+v, %s, %v; want %+v, strict, as Encode writes it", m, raw, err, want)
	}
	if m2, raw2, err := Migrate(m, raw, ""); err != nil || !m2.Equal(m) || &raw2[0] != &raw[0] {
		t.Fatalf("Migrate(current) = %+v, %v; want the header itself", m2, err)
	}
	v2 := []byte(`{"type":"session","version":2,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0,"protocol":"lenient"}`)
	h, _ = Decode(v2, "s", "")
	m, raw, err = Migrate(h, v2, "")
	want = sdk.Header{FormatVersion: sdk.FormatVersion, ID: "s", CreatedAt: 1, Protocol: sdk.ProtocolLenient}
	if err != nil || !m.Equal(want) || string(raw) != string(Encode(want)) {
		t.Fatalf("Migrate(v2) = %+v, %s, %v; want %+v, only the version changed", m, raw, err, want)
	}
}

func TestMigrateHeader(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"type":"session","version":1,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0}`, current(`{"type":"session","version":3,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0}`)},
		// Only the top-level "version" changes, wherever it is; nested
		// "version" names and values stay.
		{`{"id":"v","cwd":{"version":1},"a":["version",1],"version":1,"x":1}`, current(`{"id":"v","cwd":{"version":1},"a":["version",1],"version":3,"x":1}`)},
	} {
		got, err := migrateHeader("s", 1, []byte(c.in))
		if err != nil || string(got) != c.want {
			t.Errorf("migrateHeader(%s) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	for v := 2; v < sdk.FormatVersion; v++ {
		in := `{"type":"session","version":` + strconv.Itoa(v) + `}`
		if got, err := migrateHeader("s", v, []byte(in)); err != nil || string(got) != current(`{"type":"session","version":3}`) {
			t.Errorf("edges from v%d: %s %v", v, got, err)
		}
	}
	cur := []byte(current(`{"type":"session","version":3}`))
	if got, err := migrateHeader("s", sdk.FormatVersion, cur); err != nil || string(got) != string(cur) {
		t.Errorf("a current header migrates to itself: %s %v", got, err)
	}
	for _, bad := range []string{`{"type":"session"}`, `{"version":"1"}`, `{"version":1`, `[1]`} {
		if _, err := migrateHeader("s", 1, []byte(bad)); !errors.Is(err, sdk.CodeFormatMigrationRefused) || !strings.Contains(err.Error(), "v1→v2") {
			t.Errorf("migrateHeader(%s) = %v; want FORMAT_MIGRATION_REFUSED naming the edge", bad, err)
		}
	}
}

func TestDecodeHeaderRules(t *testing.T) {
	cases := []struct {
		in   string
		code sdk.Code
		want string
	}{
		{`{"type":"session","version":2,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0} garbage`, sdk.CodeCorruptLog, "lossless"},
		{`{"type":"session","version":` + strconv.Itoa(sdk.FormatVersion+1) + `,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0}`, sdk.CodeFormatTooNew, "v" + strconv.Itoa(sdk.FormatVersion+1)},
		{`{"type":"session","version":2,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0,"labels":{"a":"b"}}`, sdk.CodeCorruptLog, `unknown header member "labels"`},
		{`{"type":"session","version":3,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0,"labels":{}}`, sdk.CodeCorruptLog, `"labels" must not be empty`},
		{`{"type":"session","version":3,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0,"labels":["a"]}`, sdk.CodeCorruptLog, `"labels" must be an object`},
		{`{"type":"session","version":3,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0,"labels":{"a":1}}`, sdk.CodeCorruptLog, `must be a string`},
		{`{"type":"session","version":3,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0,"labels":{"b":"1","a":"2"}}`, sdk.CodeCorruptLog, `sorted order`},
		{`{"type":"session","version":3,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0,"labels":{"A":"1"}}`, sdk.CodeCorruptLog, `[a-z0-9._/-]`},
		{`{"type":"session","version":1,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0,"protocol":"lenient"}`, sdk.CodeCorruptLog, `unknown header member "protocol"`},
		{`{"type":"session","version":2,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0,"protocol":"strict"}`, sdk.CodeCorruptLog, `"protocol"`},
		{`{"type":"session","version":2,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0,"protocol":"LENIENT"}`, sdk.CodeCorruptLog, `"protocol"`},
		{`{"type":"session","version":2,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0,"protocol":true}`, sdk.CodeCorruptLog, `"protocol"`},
		{`{"type":"session","version":0,"id":"s"}`, sdk.CodeFormatUnsupported, "v0"},
		{`{"type":"session","version":"1","id":"s"}`, sdk.CodeCorruptLog, "version"},
		{`{"type":"session","version":1,"id":"other","createdAt":1,"isSeeded":false,"delegationDepth":0}`, sdk.CodeIdentityMismatch, "other"},
		{`{"type":"session","version":1,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0,"x":1}`, sdk.CodeCorruptLog, `"x"`},
		{`{"type":"sess","version":1,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0}`, sdk.CodeCorruptLog, "type"},
		{`{"type":"session","version":1,"id":"s","isSeeded":false,"delegationDepth":0}`, sdk.CodeCorruptLog, "createdAt"},
		{`{"type":"session","version":1,"id":"s","createdAt":1.5,"isSeeded":false,"delegationDepth":0}`, sdk.CodeCorruptLog, "createdAt"},
		{`{"type":"session","version":1,"id":"s","createdAt":1,"isSeeded":true,"delegationDepth":0}`, sdk.CodeCorruptLog, "inheritedEventCount"},
		{`{"type":"session","version":1,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0,"cwd":"rel"}`, sdk.CodeCorruptLog, "absolute"},
		{`{"type":"session","version":1,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0,"origin":"fork"}`, sdk.CodeCorruptLog, "origin"},
	}
	for _, c := range cases {
		_, err := Decode([]byte(c.in), "s", "/data/s/events.v1.jsonl")
		if !errors.Is(err, c.code) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %s naming %s", c.in, err, c.code, c.want)
		}
	}
}
