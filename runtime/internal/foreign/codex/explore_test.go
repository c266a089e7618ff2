package codex_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/seed-e5e476df/logbook/runtime/internal/foreign/codex"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign/foreigntest"
)

func TestExplore(t *testing.T) {
	f := os.Getenv("EXPLORE")
	if f == "" {
		t.Skip()
	}
	r := foreigntest.Run(t, codex.New(), foreigntest.ReadLines(t, f))
	for _, e := range r.Session.Events() {
		fmt.Printf("%s\n", e.JSON())
	}
	fmt.Println("damaged", r.Damaged, "refused", r.Refused)
	for _, f := range []string{"openai", "openai-responses"} {
		b, err := r.Messages(f)
		fmt.Println(f, string(b), err)
	}
}
