package session_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/seed-e5e476df/logbook/internal/corpus"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
)

// The test corpus (internal/corpus) is a valid log (the restore pipeline accepts it), canonical
// (re-encoding changes nothing), deterministic, and realistic in size.
func TestCorpusIsValidCanonicalAndDeterministic(t *testing.T) {
	envs := corpus.Session(7, 3000)
	s, err := session.Restore(context.Background(), session.Options{}, session.RestoreOptions{}, envs)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for i, e := range s.Events().All() {
		if !bytes.Equal(e.Envelope(), envs[i]) {
			t.Fatalf("event %d is not canonical:\n%s\n%s", i, envs[i], e.Envelope())
		}
		total += len(envs[i])
	}
	if avg := total / len(envs); avg < 300 || avg > 4000 {
		t.Fatalf("average event size %d bytes", avg)
	}
	again := corpus.Session(7, 3000)
	for i := range envs {
		if !bytes.Equal(envs[i], again[i]) {
			t.Fatal("not deterministic")
		}
	}
	if bytes.Equal(corpus.Session(8, 10)[1], envs[1]) {
		t.Fatal("different seeds give the same session")
	}
}

// The long session has the shape: 8 events per 3 messages, message
// sizes near their targets, a valid canonical log, deterministic.
func TestCorpusLongSessionShape(t *testing.T) {
	const messages = 3000
	envs := corpus.LongSession(3, messages)
	if want := 8*messages/3 + 1; len(envs) != want {
		t.Fatalf("%d events, want %d", len(envs), want)
	}
	s, err := session.Restore(context.Background(), session.Options{}, session.RestoreOptions{}, envs)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := s.Messages()
	if err != nil {
		t.Fatal(err)
	}
	if msgs.Len() != messages {
		t.Fatalf("%d messages, want %d", msgs.Len(), messages)
	}
	size := map[string]int{}
	for i, e := range s.Events().All() {
		if !bytes.Equal(e.Envelope(), envs[i]) {
			t.Fatalf("event %d is not canonical", i)
		}
		size[e.Type()] += len(e.Data())
	}
	turns := messages / 3
	for typ, want := range map[string][2]int{"user/message": {250, 450}, "assistant/message": {900, 1400}, "tool/result": {1400, 1800}} {
		if avg := size[typ] / turns; avg < want[0] || avg > want[1] {
			t.Errorf("%s data averages %d bytes, want %d … %d", typ, avg, want[0], want[1])
		}
	}
	again := corpus.LongSession(3, messages)
	for i := range envs {
		if !bytes.Equal(envs[i], again[i]) {
			t.Fatal("not deterministic")
		}
	}
}
