package search_test

import (
	"context"
	"fmt"

	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/runtime/internal/search"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// Scan reports the events whose message holds the text, newest first.
func ExampleScan() {
	ctx := context.Background()
	p := memory.New()
	o, _ := p.Create(ctx, sdk.Header{FormatVersion: sdk.FormatVersion, ID: "s1", CreatedAt: 1})
	p.Append(ctx, o.Handle, 0, [][]byte{
		persistencetest.Envelope(0, "user/message", `{"id":"u1","role":"user","content":[{"type":"text","text":"Why does the build fail?"}],"source":{"kind":"prompt"}}`),
		persistencetest.Envelope(1, "tool/result", `{"turn":1,"step":1,"message":{"id":"r1","role":"tool","toolCallId":"c1","content":[{"type":"text","text":"BUILD FAILED: missing go.sum entry"}]}}`),
	})
	p.Flush(ctx, o.Handle)
	p.Close(ctx, o.Handle)

	st, err := search.Scan(ctx, p, search.Query{Text: "build fail"}, func(h search.Hit) error {
		fmt.Printf("%s #%d %s: %s\n", h.Session, h.Seq, h.Type, h.Snippet)
		return nil
	})
	fmt.Println(st.Events, "events read;", err)
	// Output:
	// s1 #1 tool/result: BUILD FAILED: missing go.sum entry
	// s1 #0 user/message: Why does the build fail?
	// 2 events read; <nil>
}
