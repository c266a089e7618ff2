package sqlstore

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// fakeDialect maps "busy" to BACKEND_BUSY and blanks "secret" out of
// causes.
type fakeDialect struct{}

func (fakeDialect) Op() string { return "fake" }
func (fakeDialect) Classify(err error, what string) (sdk.Code, string, bool) {
	if strings.Contains(err.Error(), "busy") {
		return sdk.CodeBackendBusy, what + ": busy", true
	}
	return "", "", false
}
func (fakeDialect) Failed(what string) string { return what + " failed on the fake database" }
func (fakeDialect) Cause(err error) error {
	return errors.New(strings.ReplaceAll(err.Error(), "secret", "xxxxx"))
}
func (fakeDialect) Table(t string) string { return t }
func (fakeDialect) Param(n int) string    { return "?" + strconv.Itoa(n) }
func (fakeDialect) QueryRow(context.Context, string, ...any) Row {
	panic("not used")
}
func (fakeDialect) Query(context.Context, string, ...any) (Rows, func(), error) {
	panic("not used")
}

func TestReadRangeCutsChunksAtTheEventAndByteLimits(t *testing.T) {
	small := make([][]byte, 1200)
	for i := range small {
		small[i] = []byte{byte(i)}
	}
	big := make([][]byte, 5)
	for i := range big {
		big[i] = bytes.Repeat([]byte{'x'}, ChunkBytes/2)
	}
	for _, tc := range []struct {
		name     string
		events   [][]byte
		from     int64
		perFetch int64
		want     []int
	}{
		{"event limit", small, 0, 4096, []int{512, 512, 176}},
		{"event limit from an offset", small, 1000, 4096, []int{200}},
		{"a fetch shorter than a chunk ends the chunk", small, 0, 300, []int{300, 300, 300, 300}},
		{"byte limit: the event that reaches it ends the chunk", big, 0, 4096, []int{2, 2, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			var seen [][]byte
			fetch := func(seq, stop int64) ([][]byte, error) {
				return tc.events[seq:min(stop, seq+tc.perFetch)], nil
			}
			err := ReadRange(t.Context(), "fake", "read", tc.from, int64(len(tc.events)), fetch, func(c [][]byte) error {
				got = append(got, len(c))
				seen = append(seen, c...)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("chunk lengths %v; want %v", got, tc.want)
			}
			if len(seen) != len(tc.events)-int(tc.from) {
				t.Fatalf("fn got %d events; want %d", len(seen), len(tc.events)-int(tc.from))
			}
		})
	}
}

func TestReadRangeStopsWhenTheContextEnds(t *testing.T) {
	events := make([][]byte, 2000)
	ctx, cancel := context.WithCancel(t.Context())
	calls := 0
	err := ReadRange(ctx, "fake", "read", 0, int64(len(events)), func(seq, stop int64) ([][]byte, error) {
		return events[seq:stop], nil
	}, func([][]byte) error {
		calls++
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Fatalf("ReadRange after its context ended = %v after %d chunks; want context.Canceled after 1", err, calls)
	}
}

func TestDBErrMapsDriverErrors(t *testing.T) {
	ended, cancel := context.WithCancel(t.Context())
	cancel()
	own := sdk.Errorf(sdk.CodeSeqConflict, "fake", "mine")
	for _, tc := range []struct {
		name     string
		ctx      context.Context
		err      error
		code     sdk.Code
		detail   string
		canceled bool
	}{
		{"an *sdk.Error passes unchanged", t.Context(), own, sdk.CodeSeqConflict, "mine", false},
		{"a known driver error gets its code", t.Context(), errors.New("db busy"), sdk.CodeBackendBusy, "append: busy", false},
		{"any other is IO_ERROR naming the database", t.Context(), errors.New("boom"), sdk.CodeIOError, "append failed on the fake database", false},
		{"an ended context is IO_ERROR wrapping it", ended, errors.New("db busy"), sdk.CodeIOError, "append not done: the context ended", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := DBErr(tc.ctx, fakeDialect{}, "s1", "append", tc.err)
			e := sdk.ErrorOf(err)
			if e == nil || e.Code != tc.code || e.Detail != tc.detail {
				t.Fatalf("DBErr = %v; want %s %q", err, tc.code, tc.detail)
			}
			if errors.Is(err, context.Canceled) != tc.canceled {
				t.Fatalf("errors.Is(%v, context.Canceled) = %v; want %v", err, !tc.canceled, tc.canceled)
			}
		})
	}
	if err := DBErr(t.Context(), fakeDialect{}, "s1", "open", errors.New("password secret refused")); strings.Contains(err.Error(), "secret") {
		t.Fatalf("DBErr = %q; the cause must go through Cause", err)
	}
	if DBErr(t.Context(), fakeDialect{}, "s1", "open", nil) != nil {
		t.Fatal("DBErr(nil) is not nil")
	}
}

func TestSessionThatDoesNotLoadListsWithItsErrorAndNoCount(t *testing.T) {
	bad := errors.New("format gate")
	s := Session{ID: "s1", Err: bad, NextSeq: 7, Activity: 5}
	if e := s.Entry(); e.Err != bad || e.EventCount != -1 || e.ID != "s1" {
		t.Fatalf("Entry = %+v; want Err set and EventCount -1", e)
	}
	if _, err := s.Stat(); err != bad {
		t.Fatalf("Stat = %v; want the session's error", err)
	}
	ok := Session{ID: "s2", Header: sdk.Header{ID: "s2", CreatedAt: 9, FormatVersion: sdk.FormatVersion}, NextSeq: 3, SizeBytes: -1, Activity: 4}
	st, err := ok.Stat()
	if err != nil || st.EventCount != 3 || st.LastActivity != 9 || st.SizeBytes != -1 {
		t.Fatalf("Stat = %+v, %v; want 3 events, LastActivity the creation time 9 (later than 4), SizeBytes -1", st, err)
	}
}

func TestMaterializeAbandonsTheCreateOnFailure(t *testing.T) {
	broken := errors.New("broken")
	var closed []string
	closeFn := func(ctx context.Context, h string) error {
		if ctx.Err() != nil {
			t.Error("the handle is closed with an ended context")
		}
		closed = append(closed, h)
		return nil
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := Materialize(ctx, func() (sdk.Opened, error) { return sdk.Opened{Handle: "h1"}, nil },
		func(string) (sdk.Durable, error) { return sdk.Durable{}, broken }, closeFn)
	if !errors.Is(err, broken) || !slices.Equal(closed, []string{"h1"}) {
		t.Fatalf("Materialize = %v, closed %v; want the failure and h1 closed", err, closed)
	}
	o, err := Materialize(t.Context(), func() (sdk.Opened, error) { return sdk.Opened{Handle: "h2"}, nil },
		func(string) (sdk.Durable, error) { return sdk.Durable{NextSeq: 4, Revision: "r"}, nil }, closeFn)
	if err != nil || o.Handle != "h2" || o.NextSeq != 4 || o.Revision != "r" || len(closed) != 1 {
		t.Fatalf("Materialize = %+v, %v (closed %v); want h2 at 4, revision r, nothing closed", o, err, closed)
	}
}
