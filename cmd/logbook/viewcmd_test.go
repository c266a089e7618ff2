package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// viewURL is the one line `logbook view ID` prints.
var viewURL = regexp.MustCompile(`^http://127\.0\.0\.1:(\d+)/#/sessions/s$`)

// A real `logbook view s` process: it prints its URL and nothing else,
// serves the stored sessions, refuses every write with SESSION_READ_ONLY,
// streams an event another `logbook append` process writes within a
// second, and exits 0 at SIGINT.
func TestViewServesReadOnly(t *testing.T) {
	data := t.TempDir()
	finished(t, data, "s")
	started := time.Now()
	cmd, out, stderr, link := startView(t, data, "s")
	if !viewURL.MatchString(link) {
		t.Fatalf("logbook view printed %q; stderr:\n%s", link, stderr.String())
	}
	base := strings.TrimSuffix(link, "/#/sessions/s")
	t.Logf("logbook view printed its URL %v after it started", time.Since(started))

	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if status, body := get("/v1/sessions"); status != 200 || !strings.Contains(body, `"id":"s"`) {
		t.Fatalf("GET /v1/sessions: %d %s", status, body)
	}
	if status, body := get("/"); status != 200 || !strings.Contains(body, "<html") {
		t.Fatalf("GET / (the viewer): %d %.200s", status, body)
	}
	for _, w := range []struct{ path, ctype, body string }{
		{"/v1/sessions/s/events", "application/x-ndjson", finishLines[1] + "\n"},
		{"/v1/sessions/s/events/group", "application/x-ndjson", finishLines[1] + "\n"},
		{"/v1/sessions/s/open", "application/json", ""},
		{"/v1/sessions", "application/json", `{"id":"new"}`},
		{"/v1/sessions/s/fork", "application/json", `{}`},
		{"/v1/sessions/s/compact", "application/json", `{}`},
		{"/v1/sessions/s/flush", "application/json", ""},
		{"/v1/sessions/s/release", "application/json", ""},
		{"/v1/sessions/s/hold", "application/json", ""},
		{"/v1/sessions/s/release-hold", "application/json", ""},
	} {
		resp, err := http.Post(base+w.path, w.ctype, strings.NewReader(w.body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 409 || resp.Header.Get("Logbook-Code") != "SESSION_READ_ONLY" || !strings.Contains(string(b), "read-only") {
			t.Errorf("POST %s: %d %s %s; want 409 SESSION_READ_ONLY", w.path, resp.StatusCode, resp.Header.Get("Logbook-Code"), b)
		}
	}
	del, err := http.NewRequest("DELETE", base+"/v1/sessions/s", nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := http.DefaultClient.Do(del); err != nil {
		t.Fatal(err)
	} else if resp.Body.Close(); resp.StatusCode != 409 || resp.Header.Get("Logbook-Code") != "SESSION_READ_ONLY" {
		t.Errorf("DELETE /v1/sessions/s: %d %s; want 409 SESSION_READ_ONLY", resp.StatusCode, resp.Header.Get("Logbook-Code"))
	}
	if _, err := os.Stat(data + "/new.jsonl"); err == nil {
		t.Error("a refused create stored a session")
	}

	// Follow from the end, then append from another process.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/v1/sessions/s/events?follow=true&from=11", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("follow: status %d", resp.StatusCode)
	}
	got := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "id: ") {
				got <- sc.Text()
				return
			}
		}
	}()
	ok(t, data, `{"type":"turn/start","data":{"turn":2}}`+"\n", "append", "s")
	appended := time.Now()
	select {
	case id := <-got:
		if id != "id: 11" {
			t.Fatalf("followed event %q, want id: 11", id)
		}
		t.Logf("the appended event arrived %v after the append process exited", time.Since(appended))
	case <-time.After(time.Second):
		t.Fatalf("the event another process appended did not arrive within 1 s; stderr:\n%s", stderr.String())
	}
	cancel()

	signalled := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		rest, _ := io.ReadAll(out)
		if len(rest) > 0 {
			t.Errorf("logbook view printed more than its URL: %q", rest)
		}
		done <- cmd.Wait()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("logbook view after SIGINT: %v; stderr:\n%s", err, stderr.String())
		}
		t.Logf("logbook view exited %v after SIGINT", time.Since(signalled))
	case <-time.After(cmdTimeout):
		t.Fatal("logbook view did not exit after SIGINT")
	}
}

// startView starts `logbook view` with args over data and returns the
// process (killed at cleanup), its stdout after the first line, its
// stderr, and that first line: the URL.
func startView(t *testing.T, data string, args ...string) (*exec.Cmd, *bufio.Reader, *bytes.Buffer, string) {
	t.Helper()
	cmd := exec.Command(logbookBin, append([]string{"view", "--data", data}, args...)...)
	cmd.Dir = data
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := new(bytes.Buffer)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	out := bufio.NewReader(stdout)
	first := make(chan string, 1)
	go func() {
		line, _ := out.ReadString('\n')
		first <- line
	}()
	select {
	case link := <-first:
		return cmd, out, stderr, strings.TrimSuffix(link, "\n")
	case <-time.After(cmdTimeout):
		t.Fatalf("logbook view printed nothing within %v; stderr:\n%s", cmdTimeout, stderr.String())
		return nil, nil, nil, ""
	}
}

// view --tenant T finds the session in T and prints a URL whose
// ?tenant=T makes the viewer's calls run on T (the server serves every
// tenant; the page picks T from the address): the session is listed
// there and not in the default tenant. The default tenant's URL has no
// ?tenant=.
func TestViewTenantLink(t *testing.T) {
	data := t.TempDir()
	ok(t, data, input(crashLines, finishLines), "append", "s", "--tenant", "team-a")
	fail(t, data, "", "SESSION_NOT_FOUND", "view", "s")
	_, _, stderr, link := startView(t, data, "s", "--tenant", "team-a")
	m := regexp.MustCompile(`^(http://127\.0\.0\.1:\d+)/\?tenant=team-a#/sessions/s$`).FindStringSubmatch(link)
	if m == nil {
		t.Fatalf("logbook view --tenant team-a printed %q; stderr:\n%s", link, stderr.String())
	}
	for _, c := range []struct {
		query  string
		listed bool
	}{{"?tenant=team-a", true}, {"", false}} {
		resp, err := http.Get(m[1] + "/v1/sessions" + c.query)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || strings.Contains(string(b), `"id":"s"`) != c.listed {
			t.Errorf("GET /v1/sessions%s: %d %s; want s listed: %v", c.query, resp.StatusCode, b, c.listed)
		}
	}
	if _, _, _, link := startView(t, data); !regexp.MustCompile(`^http://127\.0\.0\.1:\d+/$`).MatchString(link) {
		t.Errorf("logbook view (default tenant) printed %q, want no ?tenant=", link)
	}
}

// view refuses an address that is not loopback, a session that is not
// stored, and --json, before it listens.
func TestViewRefusals(t *testing.T) {
	data := t.TempDir()
	fail(t, data, "", "USAGE", "view", "--addr", "0.0.0.0:0")
	fail(t, data, "", "USAGE", "view", "--addr", "example.com:80")
	fail(t, data, "", "USAGE", "view", "--json")
	fail(t, data, "", "SESSION_NOT_FOUND", "view", "nope")
}
