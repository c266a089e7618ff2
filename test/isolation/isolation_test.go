package isolation

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/seed-e5e476df/logbook/events"
)

// revocationBound is how soon a revoked token must be refused on every
// host (docs/operations.md: within one second), with scheduling slack.
const revocationBound = 1500 * time.Millisecond

// Seeded sessions besides the walk's: pages of each tenant (more than a
// page of the list), and one id both tenants hold, which the follow test
// appends to in both.
const (
	pagesA   = 5
	pagesB   = 4
	pageSize = 2
	sharedID = "shared-follow"
	// needle is in a user message of every page session of both
	// tenants; search for it must find A's alone.
	needle = "isolationneedle"
)

// pageID is tenant's i-th page session.
func pageID(tenant string, i int) string { return fmt.Sprintf("%s-page-%d", tenant, i) }

// TestIsolation walks every route and method on every backend, each
// backend in parallel with one deployment reused by all its checks.
func TestIsolation(t *testing.T) {
	s, err := loadSpec(openapiPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			d := deploy(t, b.name, b.hosts, b.block)
			w := &world{d: d, spec: s}
			for i := range d.hosts {
				conn, err := dialGRPC(d.hosts[i].Addr())
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { conn.Close() })
				w.conns = append(w.conns, conn)
			}
			w.seed(t)
			w.revoke(t)
			t.Run("server routes", w.serverRoutes)
			t.Run("whoami", w.whoami)
			t.Run("tenants", w.tenants)
			t.Run("lists", w.lists)
			t.Run("search", w.search)
			t.Run("follow", w.follow)
			last := len(d.hosts) - 1
			t.Run("walk", func(t *testing.T) { w.walk(t, last) })
			t.Run("unchanged", w.unchanged)
			t.Run("audit", w.audit)
			t.Run("metrics", w.metrics)
		})
	}
}

// ownSessions are the ids tenant holds once seeded, sorted (the walk's
// twins come later).
func ownSessions(tenant string) []string {
	var ids []string
	n := pagesA
	if tenant == tenantB {
		n = pagesB
		ids = append(ids, theirsID, twinID("v1"), twinID("connect"), twinID("grpc"))
	} else {
		ids = append(ids, ownID)
	}
	for i := range n {
		ids = append(ids, pageID(tenant, i))
	}
	ids = append(ids, sharedID)
	slices.Sort(ids)
	return ids
}

// seed makes the sessions of both tenants on host 0, each with its own
// token: the walk's own and theirs (a turn's start and a user message),
// B's twins (empty), the pages (the needle) and the shared id.
func (w *world) seed(t *testing.T) {
	for _, tenant := range []string{tenantA, tenantB} {
		tok := w.d.token(tenant, roleWrite)
		for _, id := range ownSessions(tenant) {
			w.mustV1(t, 0, tok, http.MethodPost, "/v1/sessions", "application/json", fmt.Sprintf(`{"id":%q}`, id), http.StatusCreated)
			if strings.HasPrefix(id, "beta-twin") || id == sharedID {
				continue
			}
			body := appendLine + userLine(id+"-m", needle+" of "+id)
			w.mustV1(t, 0, tok, http.MethodPost, "/v1/sessions/"+url.PathEscape(id)+"/events?flush=true", "application/x-ndjson", body, http.StatusOK)
		}
	}
}

// userLine is an append input line of a user message with text.
func userLine(id, text string) string {
	in := events.UserText(events.TextMessage{ID: id, Text: text})
	b, _ := json.Marshal(map[string]any{"type": in.Type, "data": in.Data, "surfaceOp": "append"})
	return string(b) + "\n"
}

// mustV1 makes a /v1 call and fails t unless it answers want; it
// returns the body.
func (w *world) mustV1(t *testing.T, host int, token, method, target, ctype, body string, want int) []byte {
	t.Helper()
	req, err := http.NewRequest(method, w.d.base(host)+target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	st, out, err := doHTTP(t.Context(), w.d.http, req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	if st != want {
		t.Fatalf("%s %s: %d %s, want %d", method, target, st, out, want)
	}
	return out
}

// revoke revokes the token "revoked", which works until then, and waits
// until every host refuses it, within revocationBound.
func (w *world) revoke(t *testing.T) {
	tok := w.d.tokens["revoked"]
	for i := range w.d.hosts {
		w.mustV1(t, i, tok, http.MethodGet, "/v1/sessions", "", "", http.StatusOK)
	}
	w.d.logbook(t, "token", "revoke", "revoked")
	start := time.Now()
	for i := range w.d.hosts {
		for {
			req, _ := http.NewRequest(http.MethodGet, w.d.base(i)+"/v1/sessions", nil)
			req.Header.Set("Authorization", "Bearer "+tok)
			st, _, err := doHTTP(t.Context(), w.d.http, req)
			if err != nil {
				t.Fatal(err)
			}
			if st == http.StatusUnauthorized {
				break
			}
			if time.Since(start) > revocationBound {
				t.Fatalf("host %d still accepts a token revoked %s ago (%d)", i, time.Since(start), st)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	t.Logf("%s: the revoked token is refused on every host %s after the revoke returned", w.d.name, time.Since(start).Round(time.Millisecond))
}

// lists: each tenant's list, read page by page on every host (/v1) and
// whole (Connect), holds exactly its own sessions; an operator naming B
// lists B's.
func (w *world) lists(t *testing.T) {
	for i := range w.d.hosts {
		for _, tenant := range []string{tenantA, tenantB} {
			if got, want := w.pages(t, i, w.d.token(tenant, roleRead), ""), ownSessions(tenant); !slices.Equal(got, want) {
				t.Errorf("host %d: %s's list %v, want %v", i, tenant, got, want)
			}
		}
		if got, want := w.pages(t, i, w.d.tokens["operator"], tenantB), ownSessions(tenantB); !slices.Equal(got, want) {
			t.Errorf("host %d: the operator's list of %s %v, want %v", i, tenantB, got, want)
		}
		c, err := methodCall(sessionsService().Methods().ByName("List"), "")
		if err != nil {
			t.Fatal(err)
		}
		reply, err := w.unary(t, i, w.d.token(tenantA, roleRead), c)
		if err != nil {
			t.Fatalf("host %d: Connect List: %v", i, err)
		}
		var got []string
		list := reply.Get(reply.Descriptor().Fields().ByName("sessions")).List()
		for j := range list.Len() {
			e := list.Get(j).Message()
			got = append(got, e.Get(e.Descriptor().Fields().ByName("id")).String())
		}
		slices.Sort(got)
		if want := ownSessions(tenantA); !slices.Equal(got, want) {
			t.Errorf("host %d: gRPC List for %s: %v, want %v", i, tenantA, got, want)
		}
	}
}

// pages reads a /v1 list pageSize at a time and returns its ids, sorted;
// every page but the last is full.
func (w *world) pages(t *testing.T, host int, token, tenant string) []string {
	var ids []string
	cursor := ""
	for n := 0; ; n++ {
		q := url.Values{"limit": {fmt.Sprint(pageSize)}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		if tenant != "" {
			q.Set("tenant", tenant)
		}
		body := w.mustV1(t, host, token, http.MethodGet, "/v1/sessions?"+q.Encode(), "", "", http.StatusOK)
		var page struct {
			Sessions []struct {
				ID string `json:"id"`
			} `json:"sessions"`
			NextCursor *string `json:"nextCursor"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatalf("list page %d: %v: %s", n, err, body)
		}
		for _, s := range page.Sessions {
			ids = append(ids, s.ID)
		}
		if page.NextCursor == nil {
			break
		}
		if len(page.Sessions) != pageSize {
			t.Errorf("list page %d holds %d sessions and is not the last", n, len(page.Sessions))
		}
		cursor = *page.NextCursor
		if n > 100 {
			t.Fatal("the list does not end")
		}
	}
	slices.Sort(ids)
	return ids
}

// unary calls a unary Sessions method over gRPC on host and returns its
// reply.
func (w *world) unary(t *testing.T, host int, token string, c rpcCall) (*dynamicpb.Message, error) {
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	reply := dynamicpb.NewMessage(c.Method.Output())
	return reply, w.conns[host].Invoke(ctx, c.Procedure(), c.Request, reply)
}

// search: `logbook search --tenant A` finds the needle in A's page
// sessions and own session alone, a hit at a time (--limit) and whole.
func (w *world) search(t *testing.T) {
	out := w.d.logbook(t, "search", needle, "--tenant", tenantA, "--json")
	var hits []struct {
		Session string `json:"session"`
	}
	if err := json.Unmarshal([]byte(out), &hits); err != nil {
		t.Fatalf("search --json: %v: %s", err, out)
	}
	var got []string
	for _, h := range hits {
		got = append(got, h.Session)
	}
	slices.Sort(got)
	want := []string{ownID}
	for i := range pagesA {
		want = append(want, pageID(tenantA, i))
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("search in %s: sessions %v, want %v", tenantA, got, want)
	}
	out = w.d.logbook(t, "search", needle, "--tenant", tenantA, "--json", "--limit", "2")
	if err := json.Unmarshal([]byte(out), &hits); err != nil || len(hits) != 2 {
		t.Errorf("search --limit 2: %v %s", err, out)
	}
	for _, h := range hits {
		if !slices.Contains(want, h.Session) {
			t.Errorf("search --limit 2 in %s found %s", tenantA, h.Session)
		}
	}
}

// follow: on the last host, an SSE follower (/v1) and an Events follower
// (gRPC; the other host's appends reach it through the backend's Watch)
// of A's shared session see A's appends on host 0 and none of B's to its
// own session of the same id.
func (w *world) follow(t *testing.T) {
	last := len(w.d.hosts) - 1
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	readTok := w.d.token(tenantA, roleRead)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, w.d.base(last)+"/v1/sessions/"+sharedID+"/events?follow=true", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+readTok)
	resp, err := w.d.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("SSE follow on host %d: %d %s", last, resp.StatusCode, b)
	}
	m := sessionsService().Methods().ByName("Events")
	c, err := methodCall(m, sharedID)
	if err != nil {
		t.Fatal(err)
	}
	c.Request.Set(m.Input().Fields().ByName("follow"), protoreflect.ValueOfBool(true))
	gctx := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+readTok)
	stream, err := w.conns[last].NewStream(gctx, &grpc.StreamDesc{ServerStreams: true}, c.Procedure())
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.SendMsg(c.Request); err != nil {
		t.Fatal(err)
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}

	const rounds = 3
	for i := range rounds {
		w.mustV1(t, 0, w.d.token(tenantB, roleWrite), http.MethodPost, "/v1/sessions/"+sharedID+"/events?flush=true", "application/x-ndjson",
			lineIf(i == 0, appendLine)+userLine(fmt.Sprintf("b%d", i), fmt.Sprintf("beta-secret-%d", i)), http.StatusOK)
		w.mustV1(t, 0, w.d.token(tenantA, roleWrite), http.MethodPost, "/v1/sessions/"+sharedID+"/events?flush=true", "application/x-ndjson",
			lineIf(i == 0, appendLine)+userLine(fmt.Sprintf("a%d", i), fmt.Sprintf("alpha-visible-%d", i)), http.StatusOK)
	}
	lastMarker := fmt.Sprintf("alpha-visible-%d", rounds-1)

	var sse bytes.Buffer
	br := bufio.NewReader(resp.Body)
	for !strings.Contains(sse.String(), lastMarker) {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("SSE on host %d ended before %s: %v\n%s", last, lastMarker, err, sse.String())
		}
		sse.WriteString(line)
	}
	if strings.Contains(sse.String(), "beta-secret") {
		t.Errorf("A's SSE follower on host %d got B's events:\n%s", last, sse.String())
	}

	var got strings.Builder
	reply := dynamicpb.NewMessage(m.Output())
	for !strings.Contains(got.String(), lastMarker) {
		if err := stream.RecvMsg(reply); err != nil {
			t.Fatalf("Events follow on host %d ended before %s: %v\n%s", last, lastMarker, err, got.String())
		}
		envs := reply.Get(m.Output().Fields().ByName("envelopes")).List()
		for j := range envs.Len() {
			got.WriteString(envs.Get(j).String() + "\n")
		}
	}
	if strings.Contains(got.String(), "beta-secret") {
		t.Errorf("A's Events follower on host %d got B's events:\n%s", last, got.String())
	}
}

// lineIf is line when cond holds, else "".
func lineIf(cond bool, line string) string {
	if cond {
		return line
	}
	return ""
}

// unchanged: after the walk, B's session has what it had, as B sees it,
// B lists what it listed before, and A lists its own sessions and the
// twins it made (ids B holds too) besides.
func (w *world) unchanged(t *testing.T) {
	wantA := append(ownSessions(tenantA), twinID("v1"), twinID("connect"), twinID("grpc"))
	slices.Sort(wantA)
	for i := range w.d.hosts {
		if got, want := w.pages(t, i, w.d.token(tenantB, roleRead), ""), ownSessions(tenantB); !slices.Equal(got, want) {
			t.Errorf("host %d: after the walk %s lists %v, want %v", i, tenantB, got, want)
		}
		if got := w.pages(t, i, w.d.token(tenantA, roleRead), ""); !slices.Equal(got, wantA) {
			t.Errorf("host %d: after the walk %s lists %v, want %v", i, tenantA, got, wantA)
		}
		body := w.mustV1(t, i, w.d.token(tenantB, roleRead), http.MethodGet, "/v1/sessions/"+theirsID+"/events", "", "", http.StatusOK)
		if n := bytes.Count(bytes.TrimSpace(body), []byte("\n")) + 1; n != 2 || !bytes.Contains(body, []byte(needle+" of "+theirsID)) {
			t.Errorf("host %d: B's session after the walk holds %d events:\n%s", i, n, body)
		}
	}
}

// metrics: no host's /metrics names a tenant or a session.
func (w *world) metrics(t *testing.T) {
	names := append([]string{tenantA, tenantB, sharedID}, walkIDs...)
	names = append(names, ownSessions(tenantA)...)
	names = append(names, ownSessions(tenantB)...)
	for i := range w.d.hosts {
		body := w.mustV1(t, i, w.d.tokens["operator"], http.MethodGet, "/metrics", "", "", http.StatusOK)
		for _, n := range names {
			if bytes.Contains(body, []byte(n)) {
				t.Errorf("host %d: /metrics names %q", i, n)
			}
		}
	}
}

// tenants: the operator lists the tenants that hold sessions, the
// implicit one first, on every host (the walk proves every lower role is
// refused).
func (w *world) tenants(t *testing.T) {
	want := `{"tenants":["default","` + tenantA + `","` + tenantB + `"]}`
	for host := range w.d.hosts {
		if b := w.mustV1(t, host, w.d.tokens["operator"], http.MethodGet, "/v1/tenants", "", "", http.StatusOK); strings.TrimSpace(string(b)) != want {
			t.Errorf("GET /v1/tenants as the operator on host %d: %s, want %s", host, b, want)
		}
	}
}

// whoami: every credential of the walk is told its own name, tenant and
// role; an operator is in the implicit tenant unless it names another.
func (w *world) whoami(t *testing.T) {
	type me struct{ Name, Tenant, Role string }
	now := time.Now()
	cases := []struct {
		bearer, tenant string
		want           me
	}{
		{w.d.token(tenantA, roleRead), "", me{tokenName(tenantA, roleRead), tenantA, "read"}},
		{w.d.token(tenantB, roleAdmin), "", me{tokenName(tenantB, roleAdmin), tenantB, "admin"}},
		{w.d.jwt("alpha-jwt", tenantA, roleWrite, now.Add(-time.Minute), now.Add(time.Hour)), "", me{"alpha-jwt", tenantA, "write"}},
		{w.d.tokens["operator"], "", me{"operator", "default", "operator"}},
		{w.d.tokens["operator"], tenantB, me{"operator", tenantB, "operator"}},
	}
	for _, c := range cases {
		target := "/v1/whoami"
		if c.tenant != "" {
			target = withTenant(target, c.tenant)
		}
		body := w.mustV1(t, len(w.d.hosts)-1, c.bearer, http.MethodGet, target, "", "", http.StatusOK)
		var got me
		if err := json.Unmarshal(body, &got); err != nil || got != c.want {
			t.Errorf("whoami as %s (tenant %q): %s (%v), want %+v", c.want.Name, c.tenant, body, err, c.want)
		}
	}
}

// serverRoutes: besides /v1 and Sessions, only GET /healthz answers
// without a credential; /readyz, /metrics, gRPC health and reflection
// refuse every credential the walk refuses, and accept a read token.
func (w *world) serverRoutes(t *testing.T) {
	for i := range w.d.hosts {
		w.mustV1(t, i, "", http.MethodGet, "/healthz", "", "", http.StatusOK)
		for _, cred := range w.refused() {
			for _, path := range []string{"/readyz", "/metrics"} {
				w.mustV1(t, i, cred.bearer, http.MethodGet, path, "", "", http.StatusUnauthorized)
			}
			if code := w.health(t, i, cred.bearer); code != codes.Unauthenticated {
				t.Errorf("host %d: gRPC health with %s: %s, want Unauthenticated", i, cred.name, code)
			}
			if code := w.reflect(t, i, cred.bearer); code != codes.Unauthenticated {
				t.Errorf("host %d: gRPC reflection with %s: %s, want Unauthenticated", i, cred.name, code)
			}
		}
		read := w.d.token(tenantA, roleRead)
		w.mustV1(t, i, read, http.MethodGet, "/metrics", "", "", http.StatusOK)
		if code := w.health(t, i, read); code != codes.OK {
			t.Errorf("host %d: gRPC health with a read token: %s", i, code)
		}
	}
}

// health calls grpc.health.v1.Health/Check on host with token and
// returns its code.
func (w *world) health(t *testing.T, host int, token string) codes.Code {
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	if token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	}
	_, err := healthpb.NewHealthClient(w.conns[host]).Check(ctx, &healthpb.HealthCheckRequest{})
	return status.Code(err)
}

// reflect asks the reflection service of host, with token, for its
// services and returns the code of the answer.
func (w *world) reflect(t *testing.T, host int, token string) codes.Code {
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	if token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	}
	s, err := reflectionpb.NewServerReflectionClient(w.conns[host]).ServerReflectionInfo(ctx)
	if err != nil {
		return status.Code(err)
	}
	// A Send on a stream the server already ended says io.EOF; the
	// stream's status comes with the Recv.
	if err := s.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil && !errors.Is(err, io.EOF) {
		return status.Code(err)
	}
	_, err = s.Recv()
	return status.Code(err)
}

// audit: a hold and its release by A's admin token, and a hold by A's
// admin JWT, are recorded in A's audit log with the credential's name as
// by (never the token), and B's audit log holds none of them.
func (w *world) audit(t *testing.T) {
	now := time.Now()
	id := pageID(tenantA, 0)
	tok := w.d.token(tenantA, roleAdmin)
	jwt := w.d.jwt("alpha-auditor", tenantA, roleAdmin, now.Add(-time.Minute), now.Add(time.Hour))
	for _, bearer := range []string{tok, jwt} {
		w.mustV1(t, 0, bearer, http.MethodPost, "/v1/sessions/"+id+"/hold", "application/json", `{"reason":"isolation audit"}`, http.StatusOK)
		w.mustV1(t, 0, bearer, http.MethodPost, "/v1/sessions/"+id+"/release-hold", "application/json", `{"reason":"isolation audit"}`, http.StatusOK)
	}
	out := w.d.logbook(t, "audit", "--tenant", tenantA, "--session", id, "--json")
	var by []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var rec struct {
			By string `json:"by"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("audit --json line %q: %v", line, err)
		}
		by = append(by, rec.By)
	}
	want := []string{tokenName(tenantA, roleAdmin), tokenName(tenantA, roleAdmin), "alpha-auditor", "alpha-auditor"}
	if !slices.Equal(by, want) {
		t.Errorf("%s's audit of %s: by %v, want %v\n%s", tenantA, id, by, want, out)
	}
	if strings.Contains(out, tok) || strings.Contains(out, jwt) {
		t.Errorf("the audit log holds a credential:\n%s", out)
	}
	if other := w.d.logbook(t, "audit", "--tenant", tenantB, "--json"); strings.Contains(other, id) || strings.Contains(other, "alpha-auditor") {
		t.Errorf("%s's audit log holds %s's records:\n%s", tenantB, tenantA, other)
	}
}
