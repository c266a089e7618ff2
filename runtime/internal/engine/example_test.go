package engine

import (
	"context"
	"fmt"
	"os"

	"github.com/seed-e5e476df/logbook/config"
)

// Ready reports every plugin process and the primary backend; a readiness
// probe answers "ready" when none has an error.
func ExampleEngine_Ready() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "logbook-example")
	defer os.RemoveAll(dir)
	e, err := Start(ctx, config.Headless(config.Overrides{DataDir: dir}), Options{Executable: logbookBin})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close(ctx)
	for _, c := range e.Ready(ctx) {
		fmt.Printf("%s %s: ready %v\n", c.Component, c.Name, c.Err == nil)
	}
	// Output:
	// plugin jsonl: ready true
	// backend jsonl: ready true
}
