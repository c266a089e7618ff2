// Command errorsdoc writes docs/errors.md from the doc comments on the error
// codes in sdk/codes.go. It is run by `go generate ./sdk`:
//
//	go run ./internal/errorsdoc/cmd/errorsdoc -in codes.go -out ../docs/errors.md
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/seed-e5e476df/logbook/sdk/internal/errorsdoc"
)

func main() {
	in := flag.String("in", "codes.go", "the Go file declaring the codes")
	out := flag.String("out", "../docs/errors.md", "the Markdown file to write")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "errorsdoc:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	src, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	md, err := errorsdoc.Generate(in, src)
	if err != nil {
		return err
	}
	return os.WriteFile(out, append(md, '\n'), 0o644)
}
