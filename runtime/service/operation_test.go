package service_test

import (
	"context"
	"errors"
	"maps"
	"path/filepath"
	"testing"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
)

// openSQLite opens a service over the SQLite plugin, a subprocess, on the
// database at path; the caller closes it.
func openSQLite(tb testing.TB, path string) *service.Service {
	tb.Helper()
	cfg, err := config.Parse([]byte(`persistence "sqlite" { path = "`+path+`" }`), "sqlite.hcl")
	if err != nil {
		tb.Fatal(err)
	}
	svc, err := service.Open(context.Background(), service.Options{Config: cfg, Executable: logbookBin})
	if err != nil {
		tb.Fatal(err)
	}
	return svc
}

// turn is one whole turn of the agent-loop protocol.
func turn(n int, text string) []events.Input {
	model := events.Model{Provider: "p", Name: "m"}
	return []events.Input{events.TurnStart(n), events.UserText(events.TextMessage{ID: "u" + text, Text: text}),
		events.StepStart(n, 1), events.AssistantText(n, 1, model, events.TextMessage{ID: "a" + text, Text: "re: " + text}),
		events.StepEnd(n, 1), events.TurnEnd(n, events.Completed())}
}

// Labels are set at create and shown with the header after a restart and
// in a fork; an append with an operation id happens once across a restart
// of the service and its SQLite plugin: the retry returns the original
// events as a replay, other events under the id are OPERATION_CONFLICT,
// and a fork child replays the ids of its prefix.
func TestOperationIDAndLabelsAcrossARestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sessions.db")
	labels := map[string]string{"framework": "openai-agents", "key": "app/user/1"}
	svc := openSQLite(t, path)
	s, err := svc.Create(ctx, service.CreateRequest{ID: "s1", Header: events.CreateOptions{Labels: labels}, Stored: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Append(ctx, service.AppendRequest{Inputs: turn(1, "hi"), OperationID: "turn-1", Flush: true})
	if err != nil || res.Replayed || len(res.Events) != 6 || res.FirstSeq == nil || *res.FirstSeq != 0 {
		t.Fatalf("first append = %+v, %v", res, err)
	}
	if err := svc.Close(ctx); err != nil {
		t.Fatal(err)
	}

	svc = openSQLite(t, path)
	defer svc.Close(ctx)
	res, err = svc.Append(ctx, "s1", service.AppendRequest{Inputs: turn(1, "hi"), OperationID: "turn-1", Expected: new(sdk.Offset(42))})
	if err != nil || !res.Replayed || len(res.Events) != 6 || res.FirstSeq == nil || *res.FirstSeq != 0 {
		t.Fatalf("the retry after a restart = %+v, %v; want the original 6 events replayed", res, err)
	}
	for i, e := range res.Events {
		if e.Seq != sdk.Seq(i) {
			t.Fatalf("replayed event %d has seq %d", i, e.Seq)
		}
	}
	_, err = svc.Append(ctx, "s1", service.AppendRequest{Inputs: turn(1, "other"), OperationID: "turn-1"})
	requireCode(t, err, sdk.CodeOperationConflict)
	var e *sdk.Error
	if !errors.As(err, &e) || e.Meta["firstSeq"] != "0" || e.Meta["count"] != "6" || e.Meta["operationId"] != "turn-1" {
		t.Fatalf("conflict meta: %v", err)
	}
	_, err = svc.Append(ctx, "s1", service.AppendRequest{Inputs: turn(2, "x"), OperationID: "bad\x00id"})
	requireCode(t, err, sdk.CodeOperationIDInvalid)

	st, err := svc.Stat(ctx, "s1")
	if err != nil || !maps.Equal(st.Header.Labels, labels) || st.Header.FormatVersion != sdk.FormatVersion {
		t.Fatalf("stored header after the restart = %+v, %v; want labels %v", st.Header, err, labels)
	}
	child, err := svc.Fork(ctx, service.ForkRequest{Source: "s1", As: "s1-fork"})
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(child.Header().Labels, labels) {
		t.Fatalf("fork child labels %v; want %v inherited", child.Header().Labels, labels)
	}
	res, err = child.Append(ctx, service.AppendRequest{Inputs: turn(1, "hi"), OperationID: "turn-1"})
	if err != nil || !res.Replayed {
		t.Fatalf("a retry in the fork = %+v, %v; want a replay", res, err)
	}
}

// Labels that break a rule are USAGE naming it, and nothing is created.
func TestCreateRefusesBadLabels(t *testing.T) {
	svc := openMemory(t)
	ctx := context.Background()
	_, err := svc.Create(ctx, service.CreateRequest{ID: "s1", Header: events.CreateOptions{Labels: map[string]string{"Bad Key": "x"}}})
	requireCode(t, err, sdk.CodeUsage)
	if _, err := svc.Stat(ctx, "s1"); sdk.CodeOf(err) != sdk.CodeSessionNotFound {
		t.Fatalf("Stat after a refused create: %v; want SESSION_NOT_FOUND", err)
	}
}
