// Package corpus generates deterministic, realistic agent sessions for
// tests and benchmarks: user prompts, assistant messages with tool calls
// whose arguments carry code, tool results of 0.2–8 KiB (source listings,
// logs, test output), and request headers that repeat the same tool schemas.
// The same seed always yields the same canonical envelopes.
package corpus

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// Session returns n canonical envelopes (seqs 0 … n−1) of a realistic agent
// session. The log ends wherever n falls, possibly inside a turn.
func Session(seed uint64, n int) [][]byte {
	g := &gen{rng: rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d)), time: 1_764_000_000_000}
	for len(g.out) < n {
		g.turn()
	}
	return g.out[:n]
}

type gen struct {
	rng   *rand.Rand
	out   [][]byte
	time  int64
	turns int
	ids   int
}

func (g *gen) emit(typ, data, surface string) {
	g.time += int64(20 + g.rng.IntN(2000))
	b := make([]byte, 0, len(data)+96)
	b = append(b, `{"seq":`...)
	b = strconv.AppendInt(b, int64(len(g.out)), 10)
	b = append(b, `,"time":`...)
	b = strconv.AppendInt(b, g.time, 10)
	b = append(b, `,"type":"`...)
	b = append(b, typ...)
	b = append(b, `","data":`...)
	b = append(b, data...)
	if surface != "" {
		b = append(b, `,"surfaceOp":`...)
		b = append(b, surface...)
	}
	b = append(b, '}')
	g.out = append(g.out, b)
}

func str(s string) string { return string(jsonv.AppendString(nil, s)) }

func (g *gen) id(prefix string) string {
	g.ids++
	return fmt.Sprintf("%s_%06d", prefix, g.ids)
}

// toolSchemas is the header's tool list, repeated in every header.
const toolSchemas = `[{"name":"read_file","description":"Read a file of the workspace, optionally a line range.","parameters":{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"integer"},"limit":{"type":"integer"}},"required":["path"]}},` +
	`{"name":"edit_file","description":"Replace an exact span of a file with new text.","parameters":{"type":"object","properties":{"path":{"type":"string"},"old":{"type":"string"},"new":{"type":"string"}},"required":["path","old","new"]}},` +
	`{"name":"shell","description":"Run a shell command in the workspace and return its output.","parameters":{"type":"object","properties":{"command":{"type":"string"},"timeout_ms":{"type":"integer"}},"required":["command"]}},` +
	`{"name":"grep","description":"Search the workspace for a regular expression.","parameters":{"type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string"}},"required":["pattern"]}}]`

var (
	verbs   = []string{"fix", "refactor", "explain", "add tests for", "speed up", "document", "review", "port"}
	objects = []string{"the LRU cache", "the HTTP handler", "the config loader", "the retry loop", "the CSV parser", "the session store", "the rate limiter", "the migration"}
	idents  = []string{"cache", "entry", "ctx", "err", "buf", "item", "key", "value", "count", "limit", "req", "resp", "mu", "opts", "path", "lines"}
	funcs   = []string{"Get", "Put", "Load", "Parse", "Flush", "Close", "Handle", "Retry", "Encode", "Validate"}
	tools   = []string{"read_file", "edit_file", "shell", "grep"}
)

func (g *gen) pick(xs []string) string { return xs[g.rng.IntN(len(xs))] }

// code returns about size bytes of Go-like source.
func (g *gen) code(size int) string {
	var b strings.Builder
	for b.Len() < size {
		switch g.rng.IntN(6) {
		case 0:
			fmt.Fprintf(&b, "func (c *%s) %s(%s string) (%s []byte, err error) {\n", strings.ToUpper(g.pick(idents)[:1])+g.pick(idents)[1:], g.pick(funcs), g.pick(idents), g.pick(idents))
		case 1:
			fmt.Fprintf(&b, "\tif %s == nil {\n\t\treturn nil, fmt.Errorf(\"%s: missing %s\")\n\t}\n", g.pick(idents), g.pick(funcs), g.pick(idents))
		case 2:
			fmt.Fprintf(&b, "\tfor i, %s := range %s {\n\t\t%s[i] = %s.%s()\n\t}\n", g.pick(idents), g.pick(idents), g.pick(idents), g.pick(idents), g.pick(funcs))
		case 3:
			fmt.Fprintf(&b, "\t%s := %s.%s(ctx, %d)\n", g.pick(idents), g.pick(idents), g.pick(funcs), g.rng.IntN(4096))
		case 4:
			fmt.Fprintf(&b, "\t// %s %s before the %s is used\n", g.pick(verbs), g.pick(objects), g.pick(idents))
		default:
			b.WriteString("}\n\n")
		}
	}
	return b.String()
}

// output returns about size bytes of tool output: a listing, a log or test
// results.
func (g *gen) output(size int) string {
	switch g.rng.IntN(3) {
	case 0:
		return g.code(size)
	case 1:
		var b strings.Builder
		for b.Len() < size {
			fmt.Fprintf(&b, "2026-11-%02d 12:%02d:%02d.%03d INFO %s: %s %s took %dms\n", 1+g.rng.IntN(28), g.rng.IntN(60), g.rng.IntN(60), g.rng.IntN(1000), g.pick(funcs), g.pick(verbs), g.pick(objects), g.rng.IntN(900))
		}
		return b.String()
	default:
		var b strings.Builder
		for b.Len() < size {
			status := "ok"
			if g.rng.IntN(9) == 0 {
				status = "FAIL"
			}
			fmt.Fprintf(&b, "--- %s: Test%s%s (%d.%02ds)\n", status, g.pick(funcs), strings.ToUpper(g.pick(idents)[:1])+g.pick(idents)[1:], g.rng.IntN(3), g.rng.IntN(100))
		}
		return b.String()
	}
}

func (g *gen) turn() {
	g.turns++
	t := g.turns
	g.emit("turn/start", fmt.Sprintf(`{"turn":%d}`, t), "")
	prompt := fmt.Sprintf("Please %s %s in %s.go; keep the public API unchanged and run the tests afterwards.", g.pick(verbs), g.pick(objects), g.pick(idents))
	g.emit("user/message", `{"id":`+str(g.id("user"))+`,"role":"user","content":[{"type":"text","text":`+str(prompt)+`}],"source":{"kind":"user"}}`, `"append"`)
	steps := 1 + g.rng.IntN(4)
	for s := 1; s <= steps; s++ {
		g.emit("step/start", fmt.Sprintf(`{"turn":%d,"step":%d}`, t, s), "")
		if t == 1 && s == 1 {
			g.emit("request/header", `{"header":{"config":{"provider":"deepseek","model":"deepseek-chat","maxTokens":8192},"tools":`+toolSchemas+`},"reason":"initial"}`, "")
		}
		final := s == steps
		if final {
			text := fmt.Sprintf("Done: I %s %s. The change is in %s.go and the tests pass.", g.pick(verbs), g.pick(objects), g.pick(idents))
			g.emit("assistant/message", fmt.Sprintf(`{"turn":%d,"step":%d,"message":{"id":%s,"role":"assistant","content":[{"type":"text","text":%s}],"source":{"kind":"model","provider":"deepseek","model":"deepseek-chat"}},"stream":[],"usage":{"input":%d,"output":%d}}`,
				t, s, str(g.id("asst")), str(text), 2000+g.rng.IntN(60000), 20+g.rng.IntN(800)), `"append"`)
			g.emit("step/end", fmt.Sprintf(`{"turn":%d,"step":%d}`, t, s), "")
			break
		}
		call := g.id("call")
		tool := g.pick(tools)
		args := `{"path":"internal/` + g.pick(idents) + `.go","new":` + str(g.code(100+g.rng.IntN(600))) + `}`
		note := fmt.Sprintf("I'll %s %s first.", g.pick(verbs), g.pick(objects))
		g.emit("assistant/message", fmt.Sprintf(`{"turn":%d,"step":%d,"message":{"id":%s,"role":"assistant","content":[{"type":"text","text":%s},{"type":"tool-call","id":%s,"name":%s,"arguments":%s}],"source":{"kind":"model","provider":"deepseek","model":"deepseek-chat"}},"stream":[],"usage":{"input":%d,"output":%d}}`,
			t, s, str(g.id("asst")), str(note), str(call), str(tool), str(args), 2000+g.rng.IntN(60000), 20+g.rng.IntN(800)), `"append"`)
		g.emit("tool/call", fmt.Sprintf(`{"turn":%d,"step":%d,"callId":%s,"name":%s,"arguments":%s}`, t, s, str(call), str(tool), str(args)), "")
		out := g.output(200 + g.rng.IntN(8*1024-200))
		g.emit("tool/result", fmt.Sprintf(`{"turn":%d,"step":%d,"message":{"id":%s,"role":"tool","toolCallId":%s,"content":[{"type":"text","text":%s}],"source":{"kind":"tool","callId":%s}}}`,
			t, s, str(g.id("result")), str(call), str(out), str(call)), `"append"`)
		g.emit("step/end", fmt.Sprintf(`{"turn":%d,"step":%d}`, t, s), "")
	}
	g.emit("turn/end", fmt.Sprintf(`{"turn":%d,"reason":{"kind":"completed"}}`, t), "")
}
