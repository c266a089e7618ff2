package server_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/internal/testbin"
	"github.com/seed-e5e476df/logbook/runtime/internal/engine"
	"github.com/seed-e5e476df/logbook/runtime/internal/host"
	"github.com/seed-e5e476df/logbook/runtime/internal/server"
)

// logbookBin is the logbook binary: the engine re-execs it for the bundled
// plugins, and the process tests run `logbook serve` from it.
var logbookBin string

func TestMain(m *testing.M) { testbin.Main(m, &logbookBin) }

// headless is the JSONL+zstd profile without compaction, under dir, with a
// write window long enough that only flushes write.
func headless(dir string) *config.Config {
	cfg := config.Headless(config.Overrides{DataDir: dir})
	cfg.WriteWindow = time.Minute
	cfg.RetryMaxBackoff = time.Minute
	return cfg
}

// startEngine starts an engine over cfg and closes it when the test ends.
func startEngine(tb testing.TB, cfg *config.Config) *engine.Engine {
	tb.Helper()
	e, err := engine.Start(context.Background(), cfg, engine.Options{Executable: logbookBin})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.Close(context.Background()) })
	return e
}

// newHost returns a host of e's sessions, the one a server serves.
func newHost(e *engine.Engine) *host.Host { return host.New(e, hclog.NewNullLogger()) }

// running is a server serving on a loopback port.
type running struct {
	addr string // host:port
	url  string // http://host:port
	stop func() error
}

// serve runs a server of a new host of e on a fresh loopback port until the test ends
// (or stop is called) and returns where it listens.
func serve(tb testing.TB, e *engine.Engine, o server.Options) *running {
	tb.Helper()
	srv, err := server.New(newHost(e), o)
	if err != nil {
		tb.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	var (
		stopped bool
		result  error
	)
	r := &running{addr: ln.Addr().String(), url: "http://" + ln.Addr().String()}
	r.stop = func() error {
		if !stopped {
			stopped = true
			cancel()
			select {
			case result = <-done:
			case <-time.After(2 * time.Minute):
				tb.Fatal("the server did not shut down within 2 minutes")
			}
		}
		return result
	}
	tb.Cleanup(func() { r.stop() })
	return r
}

// newClient returns a client of r with the given token.
func newClient(tb testing.TB, r *running, token string) *client.Client {
	c := client.New(r.url, client.Options{Token: token})
	tb.Cleanup(c.Close)
	return c
}

// appendFlush appends ins to session id and flushes the session: a
// checkpoint the server acknowledged as durable when it returns nil.
func appendFlush(ctx context.Context, c *client.Client, id string, ins ...events.Input) error {
	s := c.Session(id)
	if _, err := s.Append(ctx, ins...); err != nil {
		return err
	}
	return s.Flush(ctx)
}

// userData is the data of a user/message with the given text.
func userData(id, text string) []byte {
	return []byte(`{"id":"` + id + `","role":"user","content":[{"type":"text","text":"` + text + `"}],"source":{"kind":"user"}}`)
}

// userInput is a user/message input.
func userInput(id, text string) events.Input {
	return events.Input{Type: "user/message", Data: userData(id, text), SurfaceOp: events.Append()}
}

// openTurn is a turn left open mid-tool-call: started, prompted, a step
// whose assistant message requests a tool call that has started.
func openTurn() []events.Input {
	in := func(typ, data string, surface bool) events.Input {
		i := events.Input{Type: typ, Data: []byte(data)}
		if surface {
			i.SurfaceOp = events.Append()
		}
		return i
	}
	return []events.Input{
		in("turn/start", `{"turn":1}`, false),
		in("user/message", string(userData("u1", "list the files")), true),
		in("step/start", `{"turn":1,"step":1}`, false),
		in("assistant/message", `{"turn":1,"step":1,"message":{"id":"a1","role":"assistant","content":[{"type":"tool-call","id":"c1","name":"ls","arguments":"{}"}],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[]}`, true),
		in("tool/call", `{"turn":1,"step":1,"callId":"c1","name":"ls","arguments":"{}"}`, false),
	}
}

// padded is an ignorable log-only event of about n bytes of data, for
// tests where the kind of event does not matter: it needs no open turn.
func padded(i, n int) events.Input {
	data := fmt.Sprintf(`{"i":%d,"pad":""}`, i)
	data = data[:len(data)-2] + strings.Repeat("x", max(0, n-len(data))) + `"}`
	return events.Input{Type: "x-test/padded", Data: []byte(data), Ignorable: true}
}

// kib pads a user/message to about n bytes of data.
func kib(i, n int) events.Input {
	id := fmt.Sprintf("u%d", i)
	pad := max(0, n-len(userData(id, "")))
	return userInput(id, strings.Repeat("x", pad))
}
