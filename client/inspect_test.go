package client_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
)

// TestInspectViewIsReadOnly: Inspect of a stored session that ends in a
// torn tail and an open turn reports both, and its handle reads the stored
// log while every write is SESSION_READ_ONLY without reaching the server
// (the session stays stored, not live, its log unchanged) and Release does
// nothing; Resume then cuts the tail and appends the closers the report
// promised, and its RepairReport counts them apart from session/recovered.
func TestInspectViewIsReadOnly(t *testing.T) {
	data := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "plain.hcl")
	if err := os.WriteFile(cfg, []byte("persistence \"jsonl\" {\n  compression = \"none\"\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _ := serveAt(t, cfg, data, "")
	ctx := context.Background()
	s, err := c.Create(ctx, "v", events.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, events.TurnStart(1), events.UserText(events.TextMessage{ID: "u1", Text: "list the files"}), events.StepStart(1, 1)); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Len(ctx); err != nil || n != 3 {
		t.Fatalf("len of the live session: %d (%v); want 3", n, err)
	}
	if err := s.Release(ctx); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(data, "v", "events.v"+strconv.Itoa(sdk.FormatVersion)+".jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	const partial = `{"seq":3,"time":1,"type":"step/en`
	if _, err := f.WriteString(partial); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	view, rep, err := c.Inspect(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Live || rep.Torn.Bytes != int64(len(partial)) || rep.Torn.FromSeq != 3 || rep.Events != 3 ||
		rep.OpenTurn == nil || *rep.OpenTurn != 1 || len(rep.PendingRepair) != 2 ||
		rep.PendingRepair[0].Type != "step/end" || rep.PendingRepair[1].Type != "turn/end" {
		t.Fatalf("inspect: %+v", rep)
	}
	// Reads work: the stored log as it stands, without the pending closers.
	if h, err := view.Header(ctx); err != nil || h.ID != "v" {
		t.Fatalf("header: %+v (%v)", h, err)
	}
	if n, err := view.Len(ctx); err != nil || n != 3 {
		t.Fatalf("len: %d (%v); want 3", n, err)
	}
	if evs, err := view.Events(ctx); err != nil || len(evs) != 3 {
		t.Fatalf("events: %d (%v); want 3", len(evs), err)
	}
	if msgs, err := view.Messages(ctx, client.ViewOptions{}); err != nil || len(msgs) != 1 {
		t.Fatalf("messages: %q (%v)", msgs, err)
	}
	if tr, err := view.Transcript(ctx); err != nil || len(tr) != 1 || tr[0].Seq != 1 {
		t.Fatalf("transcript: %+v (%v)", tr, err)
	}
	if sf, err := view.Surface(ctx, client.ViewOptions{}); err != nil || len(sf) != 1 || sf[0] != 1 {
		t.Fatalf("surface: %v (%v)", sf, err)
	}

	closers := []events.Input{events.StepEnd(1, 1), events.TurnEnd(1, events.Interrupted())}
	stream := func(ctx context.Context) error {
		st := view.AppendStream(ctx)
		if err := st.Send(closers, true); !errors.Is(err, sdk.CodeSessionReadOnly) {
			return err
		}
		_, err := st.CloseAndReceive()
		return err
	}
	for name, write := range map[string]func(context.Context) error{
		"Append":        func(ctx context.Context) error { _, err := view.Append(ctx, closers...); return err },
		"AppendAt":      func(ctx context.Context) error { _, err := view.AppendAt(ctx, 3, closers...); return err },
		"AppendGroup":   func(ctx context.Context) error { _, err := view.AppendGroup(ctx, closers...); return err },
		"AppendGroupAt": func(ctx context.Context) error { _, err := view.AppendGroupAt(ctx, 3, closers...); return err },
		"AppendRetry": func(ctx context.Context) error {
			_, err := view.AppendRetry(ctx, 3, closers, client.RetryOptions{MaxAttempts: 3})
			return err
		},
		"AppendStream": stream,
		"Flush":        view.Flush,
		"Compact":      func(ctx context.Context) error { _, err := view.Compact(ctx, client.CompactOptions{}); return err },
	} {
		err := write(ctx)
		var se *sdk.Error
		if !errors.Is(err, sdk.CodeSessionReadOnly) || !errors.As(err, &se) || se.SessionID != "v" {
			t.Errorf("%s on an inspect view: %v; want SESSION_READ_ONLY", name, err)
		}
		var ae *client.AppendError
		if name != "Flush" && name != "Compact" && (!errors.As(err, &ae) || ae.Appended != 0) {
			t.Errorf("%s on an inspect view: %#v; want an *AppendError with nothing appended", name, err)
		}
	}
	if err := view.Release(ctx); err != nil {
		t.Fatalf("release of an inspect view: %v", err)
	}
	if _, again, err := c.Inspect(ctx, "v"); err != nil || again.Live || again.Events != 3 || again.Torn != rep.Torn || len(again.PendingRepair) != 2 {
		t.Fatalf("the view wrote: inspect again %+v (%v)", again, err)
	}

	s, repair, err := c.Resume(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	if repair.AlreadyLive || repair.Torn.Bytes != int64(len(partial)) || repair.Closers != 2 || len(repair.Repaired) != 3 ||
		repair.Repaired[0].Type != "session/recovered" || repair.Repaired[2].Type != "turn/end" {
		t.Fatalf("resume: %+v", repair)
	}
	if n, err := s.Len(ctx); err != nil || n != repair.NextSeq || n != 7 { // 3 + recovered + 2 closers + the marker
		t.Fatalf("len after the resume: %d (%v); want %d", n, err, repair.NextSeq)
	}
	if _, err := c.Session("missing").Len(ctx); !errors.Is(err, sdk.CodeSessionNotFound) {
		t.Fatalf("len of a missing session: %v", err)
	}
}
