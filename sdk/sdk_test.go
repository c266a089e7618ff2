package sdk

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

func TestErrorRendersOpCodeDetailAndWhere(t *testing.T) {
	e := &Error{Code: CodeReplaceCoverage, Op: "session", SessionID: "s1", Seq: new(int64(9)), Detail: "sourceEventSeqs must include every shadowed node; missing 4, 7"}
	want := `session: REPLACE_COVERAGE: sourceEventSeqs must include every shadowed node; missing 4, 7 (session "s1", seq 9)`
	if e.Error() != want {
		t.Fatalf("got %q\nwant %q", e.Error(), want)
	}
}

func TestErrorIsMatchesCodeThroughWrapping(t *testing.T) {
	inner := Errorf(CodeReplaceCoverage, "session", "missing 4")
	outer := Wrap(CodeCorruptLog, "restore", inner).WithIndex(3)
	if !errors.Is(outer, CodeReplaceCoverage) || !errors.Is(outer, CodeCorruptLog) {
		t.Fatal("errors.Is must match both codes in the chain")
	}
	if errors.Is(outer, CodeSeedInvalid) {
		t.Fatal("errors.Is matched a code that is not in the chain")
	}
	if !errors.Is(fmt.Errorf("ctx: %w", outer), &Error{Code: CodeCorruptLog}) {
		t.Fatal("errors.Is must match an *Error target by code")
	}
	if CodeOf(outer) != CodeCorruptLog || CodeOf(fmt.Errorf("x: %w", inner)) != CodeReplaceCoverage || CodeOf(errors.New("plain")) != "" {
		t.Fatal("CodeOf must return the outermost code")
	}
	joined := errors.Join(errors.New("plain"), Errorf(CodeIOError, "flush", "disk"))
	if CodeOf(joined) != CodeIOError || !Retryable(joined) {
		t.Fatal("CodeOf must look into joined errors")
	}
}

func TestAllCodesAreUniqueUpperSnake(t *testing.T) {
	seen := map[Code]bool{}
	for _, c := range AllCodes() {
		if seen[c] {
			t.Fatalf("duplicate code %s", c)
		}
		seen[c] = true
		if strings.ToUpper(string(c)) != string(c) || strings.ContainsAny(string(c), " -") {
			t.Fatalf("code %q is not UPPER_SNAKE", c)
		}
	}
	if len(seen) < 100 {
		t.Fatalf("only %d codes", len(seen))
	}
}

func TestNewSeqRejectsOutOfDomain(t *testing.T) {
	for _, v := range []int64{-1, MaxSeq + 1} {
		_, err := NewSeq("startSeq", v)
		if !errors.Is(err, CodeInvalidSeq) || !strings.Contains(err.Error(), "startSeq") || !strings.Contains(err.Error(), fmt.Sprint(v)) {
			t.Fatalf("NewSeq(%d) = %v", v, err)
		}
	}
	if _, err := NewCursor("c", -1); err != nil {
		t.Fatal("cursor -1 is valid")
	}
	if _, err := NewCursor("c", -2); !errors.Is(err, CodeInvalidSeq) {
		t.Fatal("cursor -2 is invalid")
	}
	if s, err := NewOffset("o", MaxSeq); err != nil || s != MaxSeq {
		t.Fatal("MaxSeq is a valid offset")
	}
}

func TestValidateSessionID(t *testing.T) {
	for _, bad := range []string{"", strings.Repeat("a", 81), "a\x00b", "tab\there", "del\x7f", "\xff"} {
		if err := ValidateSessionID(bad); !errors.Is(err, CodeInvalidSessionID) {
			t.Fatalf("ValidateSessionID(%q) = %v", bad, err)
		}
	}
	for _, good := range []string{"a", strings.Repeat("é", 40), "s/../x", "0195f7c2-7d3e-7000-8000-000000000000"} {
		if err := ValidateSessionID(good); err != nil {
			t.Fatalf("ValidateSessionID(%q) = %v", good, err)
		}
	}
}

func TestFormatGate(t *testing.T) {
	if v, err := CheckFormatVersion("s", "1", "x"); err != nil || v != 1 {
		t.Fatalf("v1: %d %v", v, err)
	}
	if v, err := CheckFormatVersion("s", "2", "x"); err != nil || v != 2 {
		t.Fatalf("v2: %d %v", v, err)
	}
	for v := MinSupportedFormat; v <= FormatVersion; v++ {
		if got, err := CheckFormatVersion("s", strconv.Itoa(v), "x"); err != nil || got != v {
			t.Fatalf("v%d: %d %v", v, got, err)
		}
	}
	next := "v" + strconv.Itoa(FormatVersion+1)
	_, err := CheckFormatVersion("s", strconv.Itoa(FormatVersion+1), "/data/s/events."+next+".jsonl")
	if !errors.Is(err, CodeFormatTooNew) || !strings.Contains(err.Error(), next) || !strings.Contains(err.Error(), "upgrade logbook") || !strings.Contains(err.Error(), "/data/s/events."+next+".jsonl") {
		t.Fatalf("%s: %v", next, err)
	}
	if _, err := CheckFormatVersion("s", "0", ""); !errors.Is(err, CodeFormatUnsupported) {
		t.Fatalf("v0: %v", err)
	}
	for _, bad := range []string{"1.0", "\"1\"", "", "01", "+1", "1e0", "-0"} {
		if _, err := CheckFormatVersion("s", bad, ""); !errors.Is(err, CodeCorruptLog) {
			t.Fatalf("%q: %v", bad, err)
		}
	}
	e := Migrations()
	if len(e) != FormatVersion-MinSupportedFormat {
		t.Fatalf("format v%d has one edge per version step from v%d: %+v", FormatVersion, MinSupportedFormat, e)
	}
	for i, edge := range e {
		if edge.From != i+1 || edge.To != i+2 || edge.Header != nil || edge.Events != nil {
			t.Fatalf("edge %d is not v%d→v%d changing the version alone: %+v", i, i+1, i+2, edge)
		}
	}
}

func TestErrorRendersSeqAndIndexOnlyWhenSet(t *testing.T) {
	base := Errorf(CodeSeqConflict, "flush", "stale")
	if got, want := base.Error(), "flush: SEQ_CONFLICT: stale"; got != want {
		t.Fatalf("absent seq and index: got %q, want %q", got, want)
	}
	zero := base.WithSeq(0).WithIndex(0)
	if got, want := zero.Error(), "flush: SEQ_CONFLICT: stale (seq 0, index 0)"; got != want {
		t.Fatalf("seq 0 and index 0: got %q, want %q", got, want)
	}
	if base.Seq != nil || base.Index != nil {
		t.Fatalf("With methods changed the receiver: %v", base)
	}
}

func TestWrapfKeepsTheCauseSessionAndRendersTheCauseLast(t *testing.T) {
	inner := Errorf(CodeIOError, "jsonl", "fsync failed").WithSession("s1")
	w := Wrapf(CodeCorruptLog, "restore", inner, "event %d breaks %s", 3, CodeIOError).WithIndex(3)
	want := `restore: CORRUPT_LOG: event 3 breaks IO_ERROR (session "s1", index 3): jsonl: IO_ERROR: fsync failed (session "s1")`
	if w.Error() != want || w.SessionID != "s1" || !errors.Is(w, CodeIOError) {
		t.Fatalf("got %q\nwant %q", w.Error(), want)
	}
	if got := Wrap(CodeIOError, "store", errors.New("disk gone")); got.Error() != "store: IO_ERROR: disk gone" {
		t.Fatalf("Wrap without a detail renders %q", got.Error())
	}
}

func TestErrorRendersTheOpOfASameOpCauseOnce(t *testing.T) {
	inner := Errorf(CodeIOError, "jsonl", "fsync failed")
	for _, tc := range []struct {
		name string
		err  *Error
		want string
	}{
		{"an error of the same component", Wrapf(CodeCorruptLog, "jsonl", inner, "cannot read the log"),
			"jsonl: CORRUPT_LOG: cannot read the log: IO_ERROR: fsync failed"},
		{"the cause's text rebuilt from the wire", Wrap(CodeCorruptLog, "jsonl", errors.New(inner.Error())),
			"jsonl: CORRUPT_LOG: IO_ERROR: fsync failed"},
		{"another component's error", Wrap(CodeCorruptLog, "restore", inner),
			"restore: CORRUPT_LOG: jsonl: IO_ERROR: fsync failed"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestErrorOfIsTheErrorCodeOfNames(t *testing.T) {
	flush := Wrapf(CodeFlushFailed, "flush", errors.Join(Errorf(CodeIOError, "jsonl", "disk")), "1 of 1 backends failed")
	if e := ErrorOf(fmt.Errorf("ctx: %w", flush)); e != flush || CodeOf(flush) != CodeFlushFailed || !errors.Is(flush, CodeIOError) {
		t.Fatalf("ErrorOf = %v, CodeOf = %s", e, CodeOf(flush))
	}
	if e := ErrorOf(fmt.Errorf("ctx: %w", CodeSessionNotFound)); e == nil || e.Code != CodeSessionNotFound || e.Op != "" {
		t.Fatalf("a bare code: %#v", e)
	}
	if e := ErrorOf(errors.New("plain")); e != nil {
		t.Fatalf("a plain error: %#v", e)
	}
}

func TestWithMetaCopiesMeta(t *testing.T) {
	base := Errorf(CodeSeqConflict, "session", "stale").WithMeta("expected", "3")
	got := base.WithMeta("actual", "5")
	if n, ok := got.MetaInt("actual"); !ok || n != 5 || got.Meta["expected"] != "3" {
		t.Fatalf("Meta = %v", got.Meta)
	}
	if _, ok := base.Meta["actual"]; ok || len(base.Meta) != 1 {
		t.Fatalf("WithMeta changed the receiver's Meta: %v", base.Meta)
	}
}

func TestValidateLabels(t *testing.T) {
	many := map[string]string{}
	for i := range MaxLabels + 1 {
		many["k"+strconv.Itoa(i)] = ""
	}
	for _, c := range []struct {
		labels map[string]string
		want   string // "" = valid
	}{
		{nil, ""},
		{map[string]string{"framework": "openai-agents", "0/a.b_c-d": strings.Repeat("é", 512)}, ""},
		{many, "at most 32"},
		{map[string]string{"": "x"}, "1–64 bytes"},
		{map[string]string{strings.Repeat("a", 65): "x"}, "1–64 bytes"},
		{map[string]string{"-a": "x"}, "starting with a letter or digit"},
		{map[string]string{"Key": "x"}, "[a-z0-9._/-]"},
		{map[string]string{"a b": "x"}, "[a-z0-9._/-]"},
		{map[string]string{"k": strings.Repeat("x", 1025)}, "at most 1024 bytes"},
		{map[string]string{"k": "a\nb"}, "control character"},
		{map[string]string{"k": "a\u0085b"}, "control character"},
		{map[string]string{"k": "\xff"}, "UTF-8"},
	} {
		err := ValidateLabels("create", c.labels)
		if c.want == "" {
			if err != nil {
				t.Errorf("%v: %v", c.labels, err)
			}
			continue
		}
		if !errors.Is(err, CodeUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("labels with %.40q: %v; want USAGE naming %q", fmt.Sprint(c.labels), err, c.want)
		}
	}
}

func TestValidateOperationID(t *testing.T) {
	for _, good := range []string{"a", " ~\"\\", strings.Repeat("x", 128)} {
		if err := ValidateOperationID(good); err != nil {
			t.Errorf("%q: %v", good, err)
		}
	}
	for _, bad := range []string{"", strings.Repeat("x", 129), "a\tb", "é", "a\x7f"} {
		if err := ValidateOperationID(bad); !errors.Is(err, CodeOperationIDInvalid) || !strings.Contains(err.Error(), "printable ASCII") {
			t.Errorf("%q: %v; want OPERATION_ID_INVALID naming the rule", bad, err)
		}
	}
}
