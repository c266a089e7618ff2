package persistencefault_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencefault"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// stored returns a wrapped memory backend holding session "s1" with n
// events, and its write handle.
func stored(t *testing.T, n int) (*persistencefault.Persistence, string) {
	t.Helper()
	f := persistencefault.Wrap(memory.New())
	o, err := f.Create(t.Context(), sdk.Header{FormatVersion: sdk.FormatVersion, ID: "s1", CreatedAt: 1})
	if err == nil {
		_, err = f.Append(t.Context(), o.Handle, 0, persistencetest.Batch(0, n))
	}
	if err != nil {
		t.Fatal(err)
	}
	return f, o.Handle
}

// revision is the stored revision of s1.
func revision(t *testing.T, p sdk.Persistence) string {
	t.Helper()
	st, err := p.Stat(t.Context(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	return st.Revision
}

// requireStored fails unless s1 holds n events (and, unless rev is "",
// has revision rev).
func requireStored(t *testing.T, p sdk.Persistence, n int64, rev string) {
	t.Helper()
	st, err := p.Stat(t.Context(), "s1")
	switch {
	case err != nil:
		t.Fatal(err)
	case st.EventCount != n:
		t.Fatalf("s1 holds %d events; want %d", st.EventCount, n)
	case rev != "" && st.Revision != rev:
		t.Fatalf("s1 has revision %q; want %q (unchanged)", st.Revision, rev)
	}
}

func TestFailNextAppendsFailsThatManyAppendsAndStoresNothing(t *testing.T) {
	f, h := stored(t, 3)
	rev := revision(t, f)
	f.FailNextAppends(2, nil)
	for i := range 2 {
		_, err := f.Append(t.Context(), h, 3, persistencetest.Batch(3, 2))
		persistencetest.RequireCode(t, err, sdk.CodeIOError, "FailNextAppends")
		if !sdk.Retryable(err) {
			t.Fatalf("injected failure %d is not retryable: %v", i, err)
		}
		requireStored(t, f, 3, rev)
	}
	if _, err := f.Append(t.Context(), h, 3, persistencetest.Batch(3, 2)); err != nil {
		t.Fatalf("the third append: %v", err)
	}
	requireStored(t, f, 5, "")
}

func TestFailNextAppendsReturnsTheGivenErrorFirstAndOnlyThroughTheWrapper(t *testing.T) {
	f, h := stored(t, 1)
	busy := sdk.Errorf(sdk.CodeBackendBusy, "test", "disk busy")
	f.FailNextAppends(1, busy)
	peer := f.Persistence.(*memory.Backend).Peer()
	// The injected error comes before every other check, even HANDLE_CLOSED.
	_, err := f.Append(t.Context(), "no-such-handle", 99, nil)
	if !errors.Is(err, sdk.CodeBackendBusy) {
		t.Fatalf("got %v; want the injected BACKEND_BUSY", err)
	}
	_, err = peer.Append(t.Context(), "no-such-handle", 0, nil)
	persistencetest.RequireCode(t, err, sdk.CodeHandleClosed, "no-such-handle")
	if _, err := f.Append(t.Context(), h, 1, persistencetest.Batch(1, 1)); err != nil {
		t.Fatalf("after the armed failure: %v", err)
	}
	f.FailNextAppends(3, nil)
	f.FailNextAppends(0, nil) // disarms
	if _, err := f.Append(t.Context(), h, 2, persistencetest.Batch(2, 1)); err != nil {
		t.Fatalf("after disarming: %v", err)
	}
}

func TestLoseNextAppendRepliesStoresTheBatchAndFails(t *testing.T) {
	// The ambiguous failure of docs/plugins.md: the host cannot tell whether the
	// batch landed; a resend at the same firstSeq then conflicts.
	f, h := stored(t, 3)
	f.LoseNextAppendReplies(1, nil)
	batch := persistencetest.Batch(3, 2)
	_, err := f.Append(t.Context(), h, 3, batch)
	persistencetest.RequireCode(t, err, sdk.CodeIOError, "LoseNextAppendReplies")
	requireStored(t, f, 5, "")
	got := persistencetest.ReadAll(t, f, h)
	if string(got[3]) != string(batch[0]) || string(got[4]) != string(batch[1]) {
		t.Fatal("the batch whose reply was lost is not stored")
	}
	_, err = f.Append(t.Context(), h, 3, batch)
	persistencetest.RequireCode(t, err, sdk.CodeSeqConflict, 3, 5)
	if _, err := f.Append(t.Context(), h, 5, persistencetest.Batch(5, 1)); err != nil {
		t.Fatalf("after the lost reply: %v", err)
	}
}

func TestLoseNextAppendRepliesSkipsRejectedAppends(t *testing.T) {
	f, h := stored(t, 3)
	f.LoseNextAppendReplies(1, nil)
	_, err := f.Append(t.Context(), h, 1, persistencetest.Batch(1, 1))
	persistencetest.RequireCode(t, err, sdk.CodeSeqConflict, 1, 3) // not stored: the reply is not lost
	_, err = f.Append(t.Context(), h, 3, persistencetest.Batch(3, 1))
	persistencetest.RequireCode(t, err, sdk.CodeIOError, "LoseNextAppendReplies")
	requireStored(t, f, 4, "")
}

func TestSetAppendDelayDelaysAppendsAndHonoursTheContext(t *testing.T) {
	f, h := stored(t, 1)
	const d = 40 * time.Millisecond
	f.SetAppendDelay(d)
	start := time.Now()
	if _, err := f.Append(t.Context(), h, 1, persistencetest.Batch(1, 1)); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < d {
		t.Fatalf("a delayed append took %v; want ≥ %v", el, d)
	}

	f.SetAppendDelay(time.Hour)
	rev := revision(t, f)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Millisecond)
	defer cancel()
	_, err := f.Append(ctx, h, 2, persistencetest.Batch(2, 1))
	persistencetest.RequireCode(t, err, sdk.CodeIOError)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v; want it to wrap context.DeadlineExceeded", err)
	}
	requireStored(t, f, 2, rev)

	f.SetAppendDelay(0)
	if _, err := f.Append(t.Context(), h, 2, persistencetest.Batch(2, 1)); err != nil {
		t.Fatalf("after removing the delay: %v", err)
	}
}
