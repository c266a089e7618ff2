// Command bigsession writes the export of a long session (the browser
// test's 100,000-message case) to a file, for `logbook import`: a session
// header followed by corpus.LongSession's envelopes, one per line.
//
//	go run ./viewer/internal/bigsession -id big -messages 100000 FILE
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/seed-e5e476df/logbook/internal/corpus"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

func main() {
	id := flag.String("id", "big", "the session `ID`")
	messages := flag.Int("messages", 100_000, "how many `MESSAGES` the session holds")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: bigsession [-id ID] [-messages N] FILE")
		os.Exit(2)
	}
	if err := write(flag.Arg(0), *id, *messages); err != nil {
		fmt.Fprintln(os.Stderr, "bigsession:", err)
		os.Exit(1)
	}
}

// write writes the export of session id with the given number of messages
// to path.
func write(path, id string, messages int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintf(w, `{"type":"session","version":1,"id":%s,"createdAt":1764000000000,"isSeeded":false,"delegationDepth":0}`+"\n", jsonv.AppendString(nil, id))
	for _, e := range corpus.LongSession(1, messages) {
		_, _ = w.Write(e) // a write error stays in w and is returned by Flush
		_ = w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
