package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/seed-e5e476df/logbook/runtime/internal/host"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Every code of sdk/codes.go has a status of its own in the table, and the
// codes the API's contract names have the status it names.
func TestEveryCodeHasAStatus(t *testing.T) {
	for _, c := range sdk.AllCodes() {
		s, ok := statuses[c]
		if !ok {
			t.Errorf("%s has no HTTP status in the table", c)
			continue
		}
		if s < 400 || s > 599 || http.StatusText(s) == "" {
			t.Errorf("%s maps to %d, not an error status", c, s)
		}
	}
	if len(statuses) != len(sdk.AllCodes()) {
		t.Errorf("the table has %d codes, sdk %d", len(statuses), len(sdk.AllCodes()))
	}
	want := map[sdk.Code]int{
		sdk.CodeSessionNotFound: 404, sdk.CodeRouteNotFound: 404,
		sdk.CodeSeqConflict: 409, sdk.CodeAlreadyOwned: 409, sdk.CodeOwnershipLost: 409, sdk.CodeSessionAlreadyExists: 409,
		sdk.CodeEventTooLarge: 413, sdk.CodeRequestTooLarge: 413,
		sdk.CodeJSONSyntax: 400, sdk.CodeEnvelopeInvalid: 400, sdk.CodeUsage: 400,
		sdk.CodeReplaceCoverage: 422, sdk.CodePayloadInvalid: 422, sdk.CodeJSONDuplicateKey: 422,
		sdk.CodePluginUnavailable: 503, sdk.CodeBackendBusy: 503,
		sdk.CodeUnauthenticated: 401, sdk.CodeMethodNotAllowed: 405, sdk.CodeUnsupportedMediaType: 415,
		sdk.CodeCorruptLog: 500, sdk.CodeIOError: 500,
	}
	for c, s := range want {
		if got := Status(c); got != s {
			t.Errorf("Status(%s) = %d, want %d", c, got, s)
		}
	}
}

// A problem carries RFC 9457's members, the code, and the error's details
// with its integers as JSON numbers.
func TestProblemCarriesTheDetails(t *testing.T) {
	err := sdk.Errorf(sdk.CodeSeqConflict, "append", "stale").WithSeq(7).WithIndex(2).WithMeta("expected", "3").WithMeta("actual", "5").WithMeta("backend", "jsonl")
	err.SessionID = "s1"
	rec := httptest.NewRecorder()
	first := sdk.Offset(5)
	NewProblem(err).withAppended(host.AppendResult{FirstSeq: &first}).Write(rec)
	if rec.Code != 409 || rec.Header().Get("Content-Type") != ProblemContentType || rec.Header().Get(CodeHeader) != "SEQ_CONFLICT" {
		t.Fatalf("status %d, headers %v", rec.Code, rec.Header())
	}
	var got map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"type": "urn:logbook:error:SEQ_CONFLICT", "title": "Seq conflict", "status": 409.0, "code": "SEQ_CONFLICT",
		"op": "append", "sessionId": "s1", "seq": 7.0, "index": 2.0, "expected": 3.0, "actual": 5.0,
		"appended": 0.0, "firstSeq": 5.0,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v (%T), want %v", k, got[k], got[k], v)
		}
	}
	if meta, _ := got["meta"].(map[string]any); meta["backend"] != "jsonl" || len(meta) != 1 {
		t.Errorf("meta = %v", got["meta"])
	}
	if d, _ := got["detail"].(string); d != err.Error() {
		t.Errorf("detail %q, want %q", d, err.Error())
	}
}

// A cursor names its listing's order and position, and nothing else
// decodes as one.
func TestCursorRoundTrip(t *testing.T) {
	k := pageKey{order: "recent", id: "a\nb", at: 1700000000000}
	got, ok := parseCursor(k.cursor(), "recent")
	if !ok || got != k {
		t.Fatalf("round trip: %+v %v", got, ok)
	}
	if _, ok := parseCursor(k.cursor(), "id"); ok {
		t.Error("a recent cursor decoded for order=id")
	}
	for _, bad := range []string{"", "!!", "aWQ", "aWQKeAp5"} {
		if _, ok := parseCursor(bad, "id"); ok {
			t.Errorf("%q decoded as a cursor", bad)
		}
	}
}
