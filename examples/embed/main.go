// Command embed runs logbook inside a Go program: one turn appended,
// flushed and read back as model messages, then the session resumed.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"

	"github.com/seed-e5e476df/logbook"
	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/events"
)

func main() {
	logbook.ServePlugins() // first: this program also runs logbook's bundled plugins
	data := flag.String("data", "embed-data", "the `DIR` where sessions live")
	flag.Parse()
	ctx := context.Background()
	// JSONL under *data, no compaction: this program links no summarizer
	cfg := config.Headless(config.Overrides{DataDir: *data})
	rt, err := logbook.Open(ctx, logbook.Options{Config: cfg})
	check(err)
	defer rt.Close(ctx)

	s, err := rt.Create(ctx, "", events.CreateOptions{}) // "": a generated id
	check(err)
	model := events.Model{Provider: "anthropic", Name: "claude-sonnet-4"}
	_, err = s.Append(ctx,
		events.TurnStart(1),
		events.UserText(events.TextMessage{ID: "u1", Text: "list the files"}),
		events.StepStart(1, 1),
		events.AssistantText(1, 1, model, events.TextMessage{ID: "a1", Text: "README.md and go.mod"}),
		events.StepEnd(1, 1),
		events.TurnEnd(1, events.Completed()))
	check(err)
	check(s.Flush(ctx)) // durable on every backend
	msgs, err := s.Messages()
	check(err)
	for _, m := range msgs {
		fmt.Println(string(m))
	}
	check(s.Release(ctx))

	s, rep, err := rt.Resume(ctx, s.ID()) // as after a restart
	check(err)
	fmt.Printf("resumed: %d events, %d closers\n", s.Len(), rep.Closers)
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
