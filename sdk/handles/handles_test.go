package handles_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

type handle struct{ id string }

func TestTableNamesAreNeverReusedAndBelongToOneTable(t *testing.T) {
	a, b := handles.NewTable[handle]("test"), handles.NewTable[handle]("test")
	seen := map[string]bool{}
	for range 3 {
		for _, tb := range []*handles.Table[handle]{a, b} {
			n := tb.NewName()
			if seen[n] {
				t.Fatalf("name %q given twice", n)
			}
			seen[n] = true
			tb.Put(n, &handle{})
			tb.Remove(n)
		}
	}
	n := a.NewName()
	a.Put(n, &handle{})
	_, err := b.Get(n)
	persistencetest.RequireCode(t, err, sdk.CodeHandleClosed, n)
}

func TestTableGetRemoveAndDrain(t *testing.T) {
	tb := handles.NewTable[handle]("test")
	h1, h2 := &handle{"s1"}, &handle{"s2"}
	n1, n2 := tb.NewName(), tb.NewName()
	if _, err := tb.Get(n1); !errors.Is(err, sdk.CodeHandleClosed) {
		t.Fatalf("Get before Put: %v; want HANDLE_CLOSED", err)
	}
	tb.Put(n1, h1)
	tb.Put(n2, h2)
	if got, err := tb.Get(n1); err != nil || got != h1 || !tb.Has(n1, h1) || tb.Has(n1, h2) {
		t.Fatalf("Get(%q) = %v, %v; want the handle put there", n1, got, err)
	}
	if got, ok := tb.Remove(n1); !ok || got != h1 {
		t.Fatalf("Remove(%q) = %v, %v", n1, got, ok)
	}
	if _, ok := tb.Remove(n1); ok {
		t.Fatal("a second Remove found the handle again")
	}
	_, err := tb.Get(n1)
	persistencetest.RequireCode(t, err, sdk.CodeHandleClosed, n1)
	if e := (*sdk.Error)(nil); !errors.As(err, &e) || e.Op != "test" {
		t.Fatalf("HANDLE_CLOSED has Op %q; want the table's op", e.Op)
	}
	if tb.Len() != 1 {
		t.Fatalf("Len = %d; want 1", tb.Len())
	}
	if all := tb.Drain(); len(all) != 1 || all[0] != h2 || tb.Len() != 0 {
		t.Fatalf("Drain = %v; want the one open handle", all)
	}
	if _, err := tb.Get(n2); err == nil {
		t.Fatal("a drained handle is still open")
	}
}

func TestClaimsHaveOneHolderAndOnlyItReleases(t *testing.T) {
	c := handles.NewClaims[handle]()
	a, b := &handle{"s1"}, &handle{"s1"}
	if _, ok := c.Take("s1", a); !ok {
		t.Fatal("Take of a free claim failed")
	}
	if holder, ok := c.Take("s1", b); ok || holder != a {
		t.Fatalf("Take of a held claim = %v, %v; want the holder and false", holder, ok)
	}
	if c.Release("s1", b) || c.Holder("s1") != a {
		t.Fatal("a handle that does not hold the claim released it")
	}
	if !c.Release("s1", a) || c.Holder("s1") != nil {
		t.Fatal("the holder could not release its claim")
	}
	if _, ok := c.Take("s1", b); !ok {
		t.Fatal("a released claim could not be taken again")
	}
}

func TestPendingListsTheKeptClaimsInIDOrder(t *testing.T) {
	c := handles.NewClaims[handle]()
	for _, id := range []string{"c", "a", "stored", "b"} {
		c.Take(id, &handle{id})
	}
	got := c.Pending(func(id string, h *handle) (sdk.Header, bool) {
		return sdk.Header{ID: h.id}, id != "stored"
	})
	var ids []string
	for _, e := range got {
		if e.Header.ID != e.ID {
			t.Fatalf("entry %q carries the header of %q", e.ID, e.Header.ID)
		}
		ids = append(ids, e.ID)
	}
	if strings.Join(ids, ",") != "a,b,c" {
		t.Fatalf("Pending = %v; want a,b,c", ids)
	}
}

func TestEndedIsIOErrorWrappingTheContextError(t *testing.T) {
	if err := handles.Ended(t.Context(), "test", "append"); err != nil {
		t.Fatalf("Ended of a live context: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := handles.Ended(ctx, "test", "append")
	persistencetest.RequireCode(t, err, sdk.CodeIOError, "append not done")
	if !errors.Is(err, context.Canceled) || !sdk.Retryable(err) {
		t.Fatalf("%v: want a retryable error wrapping context.Canceled", err)
	}
}

func TestErrorsNameTheirCodeSessionAndValues(t *testing.T) {
	for _, c := range []struct {
		err    *sdk.Error
		code   sdk.Code
		values []any
	}{
		{handles.HandleClosed("test", "h9"), sdk.CodeHandleClosed, []any{"h9"}},
		{handles.ReadOnly("test", "s1", "h9"), sdk.CodeReadOnlyHandle, []any{"h9", "s1"}},
		{handles.NotFound("test", "s1"), sdk.CodeSessionNotFound, []any{"s1"}},
		{handles.AlreadyExists("test", "s1", "it is stored"), sdk.CodeSessionAlreadyExists, []any{"s1", "it is stored"}},
		{handles.AlreadyOwned("test", "s1", "another handle holds it"), sdk.CodeAlreadyOwned, []any{"s1", "another handle holds it"}},
		{handles.SeqConflict("test", "s1", 3, 5), sdk.CodeSeqConflict, []any{"s1", 3, 5}},
		{handles.IOError("test", "s1", "fstat /x", errors.New("EIO")), sdk.CodeIOError, []any{"s1", "fstat /x", "EIO"}},
	} {
		persistencetest.RequireCode(t, c.err, c.code, c.values...)
		if c.err.Op != "test" {
			t.Errorf("%v: Op %q; want test", c.err, c.err.Op)
		}
	}
}

func TestCheckCreate(t *testing.T) {
	h, hdr, err := handles.CheckCreate("test", sdk.Header{ID: "s1", CreatedAt: 7}, "db")
	if err != nil || h.FormatVersion != sdk.FormatVersion || !strings.Contains(string(hdr), `"id":"s1"`) {
		t.Fatalf("CheckCreate = %+v, %s, %v; want version %d and the canonical header", h, hdr, err, sdk.FormatVersion)
	}
	_, _, err = handles.CheckCreate("test", sdk.Header{ID: ""}, "db")
	persistencetest.RequireCode(t, err, sdk.CodeInvalidSessionID)
	_, _, err = handles.CheckCreate("test", sdk.Header{ID: "s1", FormatVersion: 1}, "db")
	persistencetest.RequireCode(t, err, sdk.CodeFormatUnsupported, "s1", 1)
	_, _, err = handles.CheckCreate("test", sdk.Header{ID: "s1", Protocol: "loose"}, "db")
	persistencetest.RequireCode(t, err, sdk.CodeHeaderInvalid, "s1", "loose", "strict", "lenient")
	if want := `test: HEADER_INVALID: the session header's protocol "loose" must be "strict" or "lenient" (session "s1")`; err.Error() != want {
		t.Errorf("CheckCreate(protocol loose) = %q; want one error, %q", err, want)
	}
	h, hdr, err = handles.CheckCreate("test", sdk.Header{ID: "s1", Protocol: sdk.ProtocolStrict}, "db")
	if err != nil || h.Protocol != "" || strings.Contains(string(hdr), "protocol") {
		t.Fatalf("CheckCreate(strict) = %+v, %s, %v; want the default, stored as no member", h, hdr, err)
	}
	h, hdr, err = handles.CheckCreate("test", sdk.Header{ID: "s1", Protocol: sdk.ProtocolLenient}, "db")
	if err != nil || h.Protocol != sdk.ProtocolLenient || !strings.Contains(string(hdr), `"protocol":"lenient"`) {
		t.Fatalf("CheckCreate(lenient) = %+v, %s, %v", h, hdr, err)
	}
	_, _, err = handles.CheckCreate("test", sdk.Header{ID: "s1", DelegationDepth: -1}, "db")
	persistencetest.RequireCode(t, err, sdk.CodeHeaderInvalid, "s1", "would not read back")
}

func TestCheckOpenAppendAndRead(t *testing.T) {
	persistencetest.RequireCode(t, handles.CheckOpen("test", "s1", 3), sdk.CodeUsage, "s1", 3)
	persistencetest.RequireCode(t, handles.CheckOpen("test", "", sdk.AccessRead), sdk.CodeInvalidSessionID)
	if err := handles.CheckOpen("test", "s1", sdk.AccessWrite); err != nil {
		t.Fatal(err)
	}
	persistencetest.RequireCode(t, handles.CheckAppend("s1", -1), sdk.CodeInvalidSeq, "s1", "firstSeq")
	persistencetest.RequireCode(t, handles.CheckRead("s1", -1, 0), sdk.CodeInvalidSeq, "s1", "offset")
	persistencetest.RequireCode(t, handles.CheckRead("s1", 0, -2), sdk.CodeInvalidSeq, "s1", "length")
	if err := errors.Join(handles.CheckAppend("s1", 0), handles.CheckRead("s1", 0, -1), handles.CheckRead("s1", 4, 0)); err != nil {
		t.Fatal(err)
	}
}

func TestReadEnd(t *testing.T) {
	for _, c := range []struct {
		offset            sdk.Offset
		length, end, want int64
	}{
		{0, -1, 10, 10},
		{2, 3, 10, 5},
		{8, 5, 10, 10},
		{12, 1, 10, 10},
		{0, 0, 10, 0},
	} {
		if got := handles.ReadEnd(c.offset, c.length, c.end); got != c.want {
			t.Errorf("ReadEnd(%d, %d, %d) = %d; want %d", c.offset, c.length, c.end, got, c.want)
		}
	}
}
