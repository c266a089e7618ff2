package multihost

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
)

// A /v1 Server-Sent Events follower on host B, which does not hold the
// session, gets every event host A appends and flushes, in order, once,
// each with its seq as the event id.
func TestV1FollowOnTheOtherHost(t *testing.T) {
	ctx := t.Context()
	cl := newCluster(t)
	a, b := cl.start("a"), cl.start("b")
	s, err := a.c.Create(ctx, "sse", events.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(fctx, "GET", "http://"+b.p.Addr()+"/v1/sessions/sse/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET events on host %s: %d", b.name, resp.StatusCode)
	}
	const total = 20
	for i := range total {
		in := events.TurnStart(1) // the user messages after it are in its turn
		if i > 0 {
			in = events.UserText(events.TextMessage{ID: fmt.Sprintf("u%d", i), Text: fmt.Sprintf("message %d", i)})
		}
		if _, err := s.AppendRetry(ctx, sdk.Offset(i), []events.Input{in}, client.RetryOptions{Flush: true, MaxAttempts: 3}); err != nil {
			t.Fatal(err)
		}
	}
	br := bufio.NewReader(resp.Body)
	for want := 0; want < total; {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream on host %s ended after %d events: %v", b.name, want, err)
		}
		id, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "id: ")
		if !ok {
			continue
		}
		if id != strconv.Itoa(want) {
			t.Fatalf("event id %s, want %d", id, want)
		}
		data, err := br.ReadString('\n')
		if err != nil || !strings.HasPrefix(data, `data: {"seq":`+id+`,`) {
			t.Fatalf("event %s: data line %q (%v)", id, data, err)
		}
		want++
	}
}
