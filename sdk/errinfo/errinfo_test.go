package errinfo_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/errinfo"
)

// Encode and Decode round-trip every member of a logbook error; absent seq
// and index stay absent; another domain is not a logbook error.
func TestRoundTrip(t *testing.T) {
	in := &sdk.Error{Code: sdk.CodeSeqConflict, Op: "jsonl", SessionID: "s1", Seq: new(int64(7)), Index: new(2), Detail: "stale", Err: errors.New("cause")}
	out := errinfo.Decode(errinfo.Encode(in))
	if out.Code != in.Code || out.Op != in.Op || out.SessionID != in.SessionID || (out.Seq == nil || *out.Seq != 7) || (out.Index == nil || *out.Index != 2) || out.Detail != in.Detail || out.Err.Error() != "cause" {
		t.Fatalf("round trip: %+v", out)
	}
	if !errors.Is(out, sdk.CodeSeqConflict) {
		t.Errorf("%v is not SEQ_CONFLICT", out)
	}
	bare := errinfo.Decode(errinfo.Encode(&sdk.Error{Code: sdk.CodeIOError}))
	if bare.Seq != nil || bare.Index != nil || bare.Err != nil {
		t.Errorf("absent members: %+v", bare)
	}
	zero := errinfo.Decode(errinfo.Encode(sdk.Errorf(sdk.CodeCorruptLog, "jsonl", "bad frame").WithSeq(0).WithIndex(0)))
	if zero.Seq == nil || *zero.Seq != 0 || zero.Index == nil || *zero.Index != 0 {
		t.Errorf("seq 0 and index 0 did not come back: %v", zero)
	}
	if e := errinfo.Decode(&errdetails.ErrorInfo{Reason: "X", Domain: "other"}); e != nil {
		t.Errorf("another domain decoded to %v", e)
	}
	if e := errinfo.Decode(&errdetails.ErrorInfo{Domain: errinfo.Domain}); e != nil {
		t.Errorf("no reason decoded to %v", e)
	}
}

// Meta entries travel as metadata entries of their own and come back in
// Meta; one named like a field does not override it; an error without Meta
// decodes with a nil Meta.
func TestMetaRoundTrip(t *testing.T) {
	in := &sdk.Error{Code: sdk.CodeSeqConflict, Op: "session", Detail: "d",
		Meta: map[string]string{"expected": "3", "actual": "5", "op": "forged", "seq": "9"}}
	info := errinfo.Encode(in)
	if md := info.GetMetadata(); md["expected"] != "3" || md["actual"] != "5" || md["op"] != "session" {
		t.Fatalf("metadata %v", md)
	}
	if _, ok := info.GetMetadata()["seq"]; ok {
		t.Fatalf("a Meta entry named seq was carried: %v", info.GetMetadata())
	}
	out := errinfo.Decode(info)
	if len(out.Meta) != 2 || out.Meta["expected"] != "3" || out.Meta["actual"] != "5" || out.Op != "session" || out.Seq != nil {
		t.Fatalf("decoded %+v", out)
	}
	if n, ok := out.MetaInt("actual"); !ok || n != 5 {
		t.Errorf("MetaInt(actual) = %d, %v", n, ok)
	}
	if _, ok := out.MetaInt("missing"); ok {
		t.Error("MetaInt of an absent entry is ok")
	}
	if bare := errinfo.Decode(errinfo.Encode(&sdk.Error{Code: sdk.CodeIOError})); bare.Meta != nil {
		t.Errorf("an error without Meta decoded with %v", bare.Meta)
	}
}

// Clip keeps short texts and cuts long ones to MaxText bytes on a rune
// boundary.
func TestClip(t *testing.T) {
	if s := errinfo.Clip("short"); s != "short" {
		t.Errorf("Clip(short) = %q", s)
	}
	long := strings.Repeat("é", errinfo.MaxText)
	c := errinfo.Clip(long)
	if len(c) > errinfo.MaxText || !utf8.ValidString(c) || !strings.HasSuffix(c, "…") {
		t.Errorf("Clip(long): %d bytes, valid %v", len(c), utf8.ValidString(c))
	}
}
