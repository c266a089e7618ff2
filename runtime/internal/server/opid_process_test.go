package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/events"
)

// opTurn is turn n as one operation: turn/start, the user's message (id
// "u<n>", text), turn/end. Each operation of these tests is a whole turn,
// so a retry never finds a turn left open by it.
func opTurn(n int, text string) []events.Input {
	return []events.Input{
		events.TurnStart(n),
		events.UserText(events.TextMessage{ID: fmt.Sprintf("u%d", n), Text: text}),
		events.TurnEnd(n, events.Completed()),
	}
}

// opAnswer is the answer of a /v1 append with an operation id.
type opAnswer struct {
	status  int
	replay  bool   // header Logbook-Replay: true
	body    []byte // the envelopes (NDJSON), or a problem
	problem struct {
		Code     string            `json:"code"`
		Detail   string            `json:"detail"`
		Appended *int64            `json:"appended"`
		FirstSeq *int64            `json:"firstSeq"`
		Meta     map[string]string `json:"meta"`
	}
}

// envelopes returns the answer's envelopes, one per line.
func (a opAnswer) envelopes() [][]byte {
	return bytes.Split(bytes.TrimSuffix(a.body, []byte("\n")), []byte("\n"))
}

// firstSeq is the seq of the answer's first envelope.
func (a opAnswer) firstSeq(t *testing.T) int64 {
	t.Helper()
	return envSeq(t, a.envelopes()[0])
}

// opAppend posts ins to route ("events" or "events/group") of session id
// on the serve at addr with the operation id op and the extra query
// parameters (name, value, …).
func opAppend(t *testing.T, addr, id, route, op string, ins []events.Input, params ...string) opAnswer {
	t.Helper()
	q := url.Values{"operationId": {op}}
	for i := 0; i+1 < len(params); i += 2 {
		q.Set(params[i], params[i+1])
	}
	var body []byte
	for _, in := range ins {
		body = append(body, v1Line(in)...)
	}
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/sessions/"+id+"/"+route+"?"+q.Encode(), bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-ndjson")
	var a opAnswer
	var h http.Header
	a.status, h, a.body = do(t, req)
	a.replay = h.Get("Logbook-Replay") == "true"
	if a.status != http.StatusOK {
		if err := json.Unmarshal(a.body, &a.problem); err != nil {
			t.Fatalf("append %s under %q: %d, not a problem: %s", id, op, a.status, a.body)
		}
	}
	return a
}

// mustAppend is opAppend that must answer 200 with one envelope per input
// and the replay header as replay says.
func mustAppend(t *testing.T, addr, id, route, op string, ins []events.Input, replay bool, params ...string) opAnswer {
	t.Helper()
	a := opAppend(t, addr, id, route, op, ins, params...)
	if a.status != http.StatusOK || a.replay != replay || len(a.envelopes()) != len(ins) {
		t.Fatalf("append %s/%s under %q: %d, Logbook-Replay %v (want %v), %d envelopes for %d inputs: %s",
			id, route, op, a.status, a.replay, replay, len(a.envelopes()), len(ins), a.body)
	}
	return a
}

// mustConflict is opAppend that must be refused with OPERATION_CONFLICT
// naming op, the original append's first seq and its count, having
// appended nothing.
func mustConflict(t *testing.T, addr, id, route, op string, ins []events.Input, firstSeq int64, count int) {
	t.Helper()
	a := opAppend(t, addr, id, route, op, ins)
	p := a.problem
	if a.status != http.StatusConflict || p.Code != "OPERATION_CONFLICT" || a.replay ||
		p.FirstSeq == nil || *p.FirstSeq != firstSeq || p.Meta["operationId"] != op || p.Meta["count"] != strconv.Itoa(count) ||
		p.Appended == nil || *p.Appended != 0 {
		t.Fatalf("append %s/%s of other events under %q: %d %s; want 409 OPERATION_CONFLICT with firstSeq %d, meta operationId %q and count %d, appended 0",
			id, route, op, a.status, a.body, firstSeq, op, count)
	}
}

// envSeq is the seq of an envelope.
func envSeq(t *testing.T, env []byte) int64 {
	t.Helper()
	var v struct{ Seq *int64 }
	if err := json.Unmarshal(env, &v); err != nil || v.Seq == nil {
		t.Fatalf("not an envelope (%v): %s", err, env)
	}
	return *v.Seq
}

// storedLog is what a session's log holds, as read back over /v1.
type storedLog struct {
	envelopes [][]byte
	messages  map[string][]int64 // user/message id → the seqs it is stored at
	ops       map[string][]int64 // operation id → the seqs of the events that carry it
}

// readLog reads session id's whole log from the serve at addr.
func readLog(t *testing.T, addr, id string) storedLog {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/v1/sessions/"+id+"/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	status, _, body := do(t, req)
	if status != http.StatusOK {
		t.Fatalf("read %s: %d %s", id, status, body)
	}
	l := storedLog{messages: map[string][]int64{}, ops: map[string][]int64{}}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		env := slices.Clone(sc.Bytes())
		var v struct {
			Seq  int64  `json:"seq"`
			Type string `json:"type"`
			Data struct {
				ID string `json:"id"`
			} `json:"data"`
			Operation *struct {
				ID    string `json:"id"`
				Count int    `json:"count"`
			} `json:"operation"`
		}
		if err := json.Unmarshal(env, &v); err != nil {
			t.Fatalf("read %s: %v: %s", id, err, env)
		}
		l.envelopes = append(l.envelopes, env)
		if v.Type == "user/message" {
			l.messages[v.Data.ID] = append(l.messages[v.Data.ID], v.Seq)
		}
		if v.Operation != nil {
			l.ops[v.Operation.ID] = append(l.ops[v.Operation.ID], v.Seq)
		}
	}
	return l
}

// once fails unless the log holds each of the user messages once and each
// of the operations once, the operation marked on the first of its
// events, at the seq given.
func (l storedLog) once(t *testing.T, messages []string, ops map[string]int64) {
	t.Helper()
	for _, m := range messages {
		if len(l.messages[m]) != 1 {
			t.Errorf("user message %s is stored at seqs %v; want once", m, l.messages[m])
		}
	}
	for op, seq := range ops {
		if got := l.ops[op]; len(got) != 1 || got[0] != seq {
			t.Errorf("operation %q is marked at seqs %v; want once, at seq %d", op, got, seq)
		}
	}
}

// holds fails unless the log stores each envelope of the answers at its
// seq, byte for byte.
func (l storedLog) holds(t *testing.T, answers ...opAnswer) {
	t.Helper()
	for _, a := range answers {
		for _, env := range a.envelopes() {
			if seq := envSeq(t, env); seq >= int64(len(l.envelopes)) || !bytes.Equal(l.envelopes[seq], env) {
				t.Fatalf("the log does not store the answered envelope %s at its seq", env)
			}
		}
	}
}

// A `logbook serve` killed with SIGKILL keeps its operations: after a
// restart on the same data directory, the same append under a flushed
// operation's id is a replay (200, Logbook-Replay: true, the original
// envelopes byte for byte), through either append route and whatever the
// expected seq; other events under it are OPERATION_CONFLICT naming the
// original first seq; and the log holds its events once. An operation
// acknowledged without a flush is not durable (docs/architecture.md,
// "What Append and Flush promise"): its retry either replays it, when the
// write-behind stored it before the kill, or appends it now, and either
// way the log holds it once and a further retry replays that. For the
// default JSONL store and for SQLite.
func TestOperationReplayAfterServeKill(t *testing.T) {
	for _, b := range []struct {
		name   string
		config string // the config file's text; "" for the embedded default
	}{
		{"jsonl", ""},
		{"sqlite", "persistence \"sqlite\" {}\n"},
	} {
		t.Run(b.name, func(t *testing.T) {
			start := time.Now()
			dir := t.TempDir()
			var args []string
			if b.config != "" {
				args = []string{"--config", writeFile(t, filepath.Join(t.TempDir(), b.name+".hcl"), b.config)}
			}
			p := startServe(t, dir, args...)
			if code, body := v1Addr(t, p.addr, http.MethodPost, "/v1/sessions", `{"id":"k"}`); code != http.StatusCreated {
				t.Fatalf("create: %d %s", code, body)
			}
			turn1, turn2 := opTurn(1, "list the files"), opTurn(2, "and the tests")
			first := mustAppend(t, p.addr, "k", "events", "op-1", turn1, false, "flush", "true")
			if !bytes.HasSuffix(first.envelopes()[0], []byte(`,"operation":{"id":"op-1","count":3}}`)) {
				t.Fatalf("the operation's first envelope does not end with its operation member: %s", first.envelopes()[0])
			}
			second := mustAppend(t, p.addr, "k", "events", "op-2", turn2, false) // acknowledged, not flushed
			p.kill9(t)

			p = startServe(t, dir, args...)
			again := mustAppend(t, p.addr, "k", "events", "op-1", turn1, true, "flush", "true")
			if !bytes.Equal(again.body, first.body) {
				t.Fatalf("the replay after the kill answers\n%s\nnot the original envelopes\n%s", again.body, first.body)
			}
			// The group route and an expected seq the log does not have: the
			// same operation, a replay again.
			if g := mustAppend(t, p.addr, "k", "events/group", "op-1", turn1, true, "expectedSeq", "0"); !bytes.Equal(g.body, first.body) {
				t.Fatalf("the replay through events/group answers\n%s\nnot\n%s", g.body, first.body)
			}
			other := opTurn(1, "list the files, please")
			mustConflict(t, p.addr, "k", "events", "op-1", other, first.firstSeq(t), 3)
			mustConflict(t, p.addr, "k", "events/group", "op-1", turn1[:2], first.firstSeq(t), 3)

			retry := opAppend(t, p.addr, "k", "events", "op-2", turn2, "flush", "true")
			switch {
			case retry.status != http.StatusOK || len(retry.envelopes()) != 3:
				t.Fatalf("the retry of the unflushed operation: %d %s", retry.status, retry.body)
			case retry.replay && !bytes.Equal(retry.body, second.body):
				t.Fatalf("the replay of the unflushed operation answers\n%s\nnot the original envelopes\n%s", retry.body, second.body)
			}
			t.Logf("the operation acknowledged without a flush was stored before the kill: %v", retry.replay)
			if r := mustAppend(t, p.addr, "k", "events", "op-2", turn2, true); !bytes.Equal(r.body, retry.body) {
				t.Fatalf("a further retry answers\n%s\nnot\n%s", r.body, retry.body)
			}
			l := readLog(t, p.addr, "k")
			l.once(t, []string{"u1", "u2"}, map[string]int64{"op-1": first.firstSeq(t), "op-2": retry.firstSeq(t)})
			l.holds(t, first, retry)
			t.Logf("%s: %s", b.name, time.Since(start).Round(time.Millisecond))
		})
	}
}

// writeFile writes body to path and returns path.
func writeFile(t *testing.T, path, body string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// v1Addr sends a /v1 request with a JSON body ("" for none) to the serve
// at addr and returns the status and body.
func v1Addr(t *testing.T, addr, method, path, body string) (int, []byte) {
	t.Helper()
	return v1(t, &running{addr: addr, url: "http://" + addr}, method, path, body)
}
