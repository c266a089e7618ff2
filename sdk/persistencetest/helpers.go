package persistencetest

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// BaseTime is the time member of Envelope's seq 0; seq n has BaseTime + n.
const BaseTime = 1_700_000_000_000

// Envelope returns the canonical envelope (docs/format.md) of one event:
// {"seq":seq,"time":BaseTime+seq,"type":typ,"data":data}. typ is encoded as
// a JSON string; data must already be canonical JSON and is used verbatim.
// The result is a new buffer.
func Envelope(seq int, typ, data string) []byte {
	b := make([]byte, 0, 64+len(typ)+len(data))
	b = append(b, `{"seq":`...)
	b = strconv.AppendInt(b, int64(seq), 10)
	b = append(b, `,"time":`...)
	b = strconv.AppendInt(b, BaseTime+int64(seq), 10)
	b = append(b, `,"type":`...)
	b = jsonv.AppendString(b, typ)
	b = append(b, `,"data":`...)
	b = append(b, data...)
	return append(b, '}')
}

// Batch returns n contiguous canonical todo/write envelopes with seqs
// first … first+n−1, each with distinct data. Every call returns new
// buffers.
func Batch(first, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		seq := first + i
		out[i] = Envelope(seq, "todo/write", `{"todos":[{"content":"event `+strconv.Itoa(seq)+`","status":"pending"}]}`)
	}
	return out
}

// ReadAll reads every event of the session behind handle, from offset 0 to
// the end, and fails the test on any error.
func ReadAll(t testing.TB, p sdk.Persistence, handle string) [][]byte {
	t.Helper()
	return readRange(t, p, handle, 0, -1)
}

func readRange(t testing.TB, p sdk.Persistence, handle string, offset sdk.Offset, length int64) [][]byte {
	t.Helper()
	var out [][]byte
	err := p.Read(t.Context(), handle, offset, length, func(events [][]byte) error {
		out = append(out, events...)
		return nil
	})
	if err != nil {
		t.Fatalf("Read(%s, offset %d, length %d): %v", handle, offset, length, err)
	}
	return out
}

// RequireCode fails the test unless err is an *sdk.Error that matches code
// with errors.Is and whose message names every value. Integers must appear
// as whole numbers (7 matches neither "17" nor "7.5"); other values are
// rendered with fmt.Sprint and must appear as substrings.
func RequireCode(t testing.TB, err error, code sdk.Code, values ...any) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error; want %s naming %v", code, values)
	}
	if !errors.Is(err, code) {
		t.Fatalf("got %v (code %q); want %s", err, sdk.CodeOf(err), code)
	}
	var e *sdk.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %T %v; want an *sdk.Error", err, err)
	}
	if missing := missingValues(err.Error(), values); len(missing) > 0 {
		t.Fatalf("%s message %q does not name %v", code, err.Error(), missing)
	}
}

func missingValues(msg string, values []any) []string {
	var missing []string
	for _, v := range values {
		s := fmt.Sprint(v)
		switch v.(type) {
		case int, int64, sdk.Seq, sdk.Offset, sdk.Cursor:
			// Not part of a longer number: no digit, '.' or '-' before it,
			// no digit or decimal fraction after it.
			if !regexp.MustCompile(`(^|[^0-9.-])` + regexp.QuoteMeta(s) + `($|[^0-9.]|\.($|[^0-9]))`).MatchString(msg) {
				missing = append(missing, s)
			}
		default:
			if !strings.Contains(msg, s) {
				missing = append(missing, strconv.Quote(s))
			}
		}
	}
	return missing
}
