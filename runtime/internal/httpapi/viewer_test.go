package httpapi_test

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// closedTurnLines continues openTurnLines: the tool's result (seq 5), a
// rewrite of it that replaces it (6), and the end of the turn (7).
func closedTurnLines() []byte {
	return ndjson(
		`{"type":"tool/result","surfaceOp":"append","data":{"turn":1,"step":1,"message":{"id":"r1","role":"tool","toolCallId":"c1","content":[{"type":"text","text":"a.txt b.txt"}],"source":{"kind":"tool","callId":"c1"}}}}`,
		`{"type":"tool/result","surfaceOp":{"op":"replace","startSeq":5,"endSeq":5},"sourceEventSeqs":[5],"data":{"turn":1,"step":1,"message":{"id":"r1","role":"tool","toolCallId":"c1","content":[{"type":"text","text":"[2 files]"}],"source":{"kind":"tool","callId":"c1"}}}}`,
		`{"type":"step/end","data":{"turn":1,"step":1}}`,
		`{"type":"turn/end","data":{"turn":1,"reason":{"kind":"completed"}}}`,
	)
}

// The routes a log viewer reads: why (the same JSON as logbook why
// --json), shadowed, tokens, paged events with the log's length, lineage.
func TestV1ViewerRoutes(t *testing.T) {
	dir := t.TempDir()
	s := startServeIn(t, dir)
	s.ok(t, 201, "POST", "/v1/sessions", "application/json", []byte(`{"id":"v"}`))
	s.ok(t, 200, "POST", "/v1/sessions/v/events?flush=true", "application/x-ndjson", append(openTurnLines(), closedTurnLines()...))
	n := s.length(t, "v")

	t.Run("why is logbook why --json", func(t *testing.T) {
		got := bytes.TrimSpace(s.ok(t, 200, "GET", "/v1/sessions/v/why?seq=6", "", nil).body)
		out, err := exec.Command(logbookBin, "--data", dir, "why", "v", "6", "--json").Output()
		if err != nil {
			t.Fatalf("logbook why: %v", err)
		}
		var a, b any
		if err := json.Unmarshal(got, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &b); err != nil {
			t.Fatal(err)
		}
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if !bytes.Equal(ja, jb) {
			t.Fatalf("why route\n%s\nlogbook why --json\n%s", ja, jb)
		}
		var root struct {
			Seq         int64 `json:"seq"`
			Replace     struct{ StartSeq, EndSeq int64 }
			DerivedFrom []struct {
				Seq      int64  `json:"seq"`
				Relation string `json:"relation"`
			} `json:"derivedFrom"`
		}
		if err := json.Unmarshal(got, &root); err != nil || root.Seq != 6 || root.Replace.StartSeq != 5 || len(root.DerivedFrom) == 0 ||
			root.DerivedFrom[0].Seq != 5 || root.DerivedFrom[0].Relation != "shadowed" {
			t.Fatalf("why?seq=6 = %s (%v)", got, err)
		}
		s.failed(t, 400, "USAGE", "GET", "/v1/sessions/v/why", "", nil)
		s.failed(t, 400, "USAGE", "GET", "/v1/sessions/v/why?seq=x", "", nil)
		s.failed(t, 422, "INVALID_BOUNDARY", "GET", "/v1/sessions/v/why?seq="+strconv.FormatInt(n, 10), "", nil)
		s.failed(t, 404, "SESSION_NOT_FOUND", "GET", "/v1/sessions/nope/why?seq=0", "", nil)
	})

	t.Run("shadowed", func(t *testing.T) {
		if got := string(bytes.TrimSpace(s.ok(t, 200, "GET", "/v1/sessions/v/shadowed", "", nil).body)); got != `{"shadowed":[5],"replacedBy":{"5":6}}` {
			t.Errorf("shadowed = %s", got)
		}
		if got := string(bytes.TrimSpace(s.ok(t, 200, "GET", "/v1/sessions/v/shadowed?at=5", "", nil).body)); got != `{"shadowed":[],"replacedBy":{}}` {
			t.Errorf("shadowed?at=5 = %s", got)
		}
	})

	t.Run("tokens", func(t *testing.T) {
		var tk struct {
			Total, SurfaceTokens, HeaderTokens int64
			Baseline                           string
			PerTurn                            []struct {
				Turn     *int64 `json:"turn"`
				StartSeq int64  `json:"startSeq"`
				Tokens   int64  `json:"tokens"`
			} `json:"perTurn"`
			Nodes  []struct{ Seq, Tokens int64 }
			Method string
		}
		body := s.ok(t, 200, "GET", "/v1/sessions/v/tokens", "", nil).body
		if err := json.Unmarshal(body, &tk); err != nil {
			t.Fatal(err)
		}
		var sum int64
		for _, nd := range tk.Nodes {
			sum += nd.Tokens
		}
		if len(tk.Nodes) != 3 || tk.Nodes[2].Seq != 6 || sum != tk.SurfaceTokens || sum == 0 || tk.Total != tk.HeaderTokens+tk.SurfaceTokens ||
			tk.Baseline != "estimated" || tk.Method == "" || len(tk.PerTurn) != 1 || tk.PerTurn[0].Turn == nil || *tk.PerTurn[0].Turn != 1 ||
			tk.PerTurn[0].StartSeq != 0 || tk.PerTurn[0].Tokens != sum {
			t.Fatalf("tokens = %s", body)
		}
	})

	t.Run("events are paged with the log's length", func(t *testing.T) {
		r := s.ok(t, 200, "GET", "/v1/sessions/v/events?from=1&limit=2", "", nil)
		ls := lines(r.body)
		if len(ls) != 2 || !bytes.Contains(ls[0], []byte(`"seq":1,`)) || !bytes.Contains(ls[1], []byte(`"seq":2,`)) {
			t.Fatalf("events?from=1&limit=2:\n%s", r.body)
		}
		if got := r.header.Get("Logbook-Next-Seq"); got != strconv.FormatInt(n, 10) {
			t.Errorf("Logbook-Next-Seq %q, want %d", got, n)
		}
		if ls := lines(s.ok(t, 200, "GET", "/v1/sessions/v/events?from=6&to=7&limit=5", "", nil).body); len(ls) != 1 {
			t.Errorf("events?from=6&to=7&limit=5: %d lines", len(ls))
		}
		s.failed(t, 400, "USAGE", "GET", "/v1/sessions/v/events?limit=0", "", nil)
	})

	t.Run("lineage", func(t *testing.T) {
		s.ok(t, 201, "POST", "/v1/sessions/v/fork", "application/json", []byte(`{"at":3,"as":"c"}`))
		s.ok(t, 201, "POST", "/v1/sessions/c/fork", "application/json", []byte(`{"at":2,"as":"g"}`))
		s.ok(t, 201, "POST", "/v1/sessions/v/fork", "application/json", []byte(`{"as":"d"}`))
		got := string(bytes.TrimSpace(s.ok(t, 200, "GET", "/v1/sessions/c/lineage", "", nil).body))
		var l struct {
			ID        string `json:"id"`
			Ancestors []map[string]any
			Children  []struct {
				ID        string `json:"id"`
				Seq       *int64 `json:"seq"`
				CreatedAt int64  `json:"createdAt"`
			}
			Tree json.RawMessage
		}
		if err := json.Unmarshal([]byte(got), &l); err != nil {
			t.Fatal(err)
		}
		want := `{"id":"v","children":[{"id":"c","seq":3,"children":[{"id":"g","seq":2,"children":[]}]},{"id":"d","seq":` + strconv.FormatInt(n-1, 10) + `,"children":[]}]}`
		if l.ID != "c" || len(l.Ancestors) != 1 || l.Ancestors[0]["id"] != "v" || l.Ancestors[0]["seq"] != 3.0 ||
			len(l.Children) != 1 || l.Children[0].ID != "g" || l.Children[0].Seq == nil || *l.Children[0].Seq != 2 || l.Children[0].CreatedAt == 0 ||
			string(l.Tree) != want {
			t.Fatalf("lineage of c = %s\nwant tree %s", got, want)
		}
		s.failed(t, 404, "SESSION_NOT_FOUND", "GET", "/v1/sessions/nope/lineage", "", nil)
	})
}

// order=activity lists the most recently active session first, live or
// stored, pages by cursor, and each entry carries lastActivity, eventCount
// when known, and its parent with the fork point.
func TestV1SessionsByActivity(t *testing.T) {
	s := startServe(t)
	after := func(ms int64) { // the next write lands in a later millisecond
		for deadline := time.Now().Add(time.Second); time.Now().UnixMilli() <= ms && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	}
	var last int64
	for _, id := range []string{"a", "b", "c"} {
		after(last)
		s.ok(t, 201, "POST", "/v1/sessions", "application/json", []byte(`{"id":"`+id+`"}`))
		last = time.Now().UnixMilli()
	}
	after(last)
	s.ok(t, 200, "POST", "/v1/sessions/a/events?flush=true", "application/x-ndjson", ndjson(turnLine(1), userLine("u1", "hi")))
	after(time.Now().UnixMilli())
	s.ok(t, 201, "POST", "/v1/sessions/a/fork", "application/json", []byte(`{"at":0,"as":"f"}`))

	type entry struct {
		ID           string `json:"id"`
		LastActivity *int64 `json:"lastActivity"`
		EventCount   *int64 `json:"eventCount"`
		Parent       *struct {
			ID  string `json:"id"`
			Seq *int64 `json:"seq"`
		} `json:"parent"`
	}
	page := func(q string) ([]entry, *string) {
		var p struct {
			Sessions   []entry `json:"sessions"`
			NextCursor *string `json:"nextCursor"`
		}
		if err := json.Unmarshal(s.ok(t, 200, "GET", "/v1/sessions?order=activity"+q, "", nil).body, &p); err != nil {
			t.Fatal(err)
		}
		return p.Sessions, p.NextCursor
	}
	check := func(when string) {
		t.Helper()
		all, _ := page("")
		var ids, activity []string
		for _, e := range all {
			ids = append(ids, e.ID)
			if e.LastActivity == nil || *e.LastActivity <= 0 {
				t.Errorf("%s: %s has no lastActivity", when, e.ID)
			} else {
				activity = append(activity, e.ID+"="+strconv.FormatInt(*e.LastActivity, 10))
			}
		}
		if got := strings.Join(ids, ","); got != "f,a,c,b" {
			t.Fatalf("%s: order=activity listed %s (lastActivity %s), want f,a,c,b", when, got, strings.Join(activity, " "))
		}
		if p := all[0].Parent; p == nil || p.ID != "a" || p.Seq == nil || *p.Seq != 0 || all[1].Parent != nil {
			t.Errorf("%s: parent of f %+v, of a %+v; want {a 0} and none", when, p, all[1].Parent)
		}
		var paged []string
		for q := "&limit=1"; ; {
			es, next := page(q)
			for _, e := range es {
				paged = append(paged, e.ID)
			}
			if next == nil {
				break
			}
			q = "&limit=1&cursor=" + *next
		}
		if got := strings.Join(paged, ","); got != "f,a,c,b" {
			t.Errorf("%s: paging by one listed %s", when, got)
		}
	}
	check("live")
	if live, _ := page(""); live[1].EventCount == nil || *live[1].EventCount != 2 {
		t.Errorf("live a: eventCount %v, want 2", live[1].EventCount)
	}
	for _, id := range []string{"f", "a", "c", "b"} {
		s.ok(t, 204, "POST", "/v1/sessions/"+id+"/release", "application/json", nil)
	}
	check("stored")
}
