package chaos

import (
	"context"
	"fmt"
	"strings"
	"syscall"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
)

// secondCLI pauses the writers, so that serve holds their sessions, and
// runs the CLI as a second writer: `logbook append` of a held session must
// be refused ALREADY_OWNED; `logbook create` of an id serve has just
// created must be refused, and serve's next append to it must be stored.
func secondCLI(h *harness) {
	if err := h.pause(); err != nil {
		h.t.Fatal(err)
	}
	defer h.resume()
	ctx := context.Background()
	if w := h.heldWriter(ctx); w != nil {
		intruder := event{pid: h.newID("intruder-"), text: "a second writer"}
		_, stderr, err := h.cli(ctx, turnLines(intruderTurn, []event{intruder}), "append", w.session().id)
		switch {
		case err == nil:
			h.problem(fmt.Errorf("second-cli: logbook append %s succeeded while serve held the session", w.session().id))
		case !strings.Contains(stderr, string(sdk.CodeAlreadyOwned)):
			h.problem(fmt.Errorf("second-cli: logbook append %s of a held session failed without ALREADY_OWNED: %s", w.session().id, tail(stderr, 1000)))
		}
	}
	c := h.client()
	id := h.newID("x")
	rec := h.created(ctx, c, id)
	if rec == nil {
		return
	}
	_, stderr, err := h.cli(ctx, "", "create", id)
	switch {
	case err == nil:
		h.problem(fmt.Errorf("second-cli: logbook create %s succeeded after serve had created it", id))
	case !strings.Contains(stderr, string(sdk.CodeSessionAlreadyExists)) && !strings.Contains(stderr, string(sdk.CodeAlreadyOwned)):
		h.problem(fmt.Errorf("second-cli: logbook create %s of an id serve created failed without SESSION_ALREADY_EXISTS: %s", id, tail(stderr, 1000)))
	}
	h.appendOne(ctx, c, rec, "second-cli")
}

// secondServe pauses the writers and starts a second serve on the same
// data directory: it must be refused a session the first one holds
// (ALREADY_OWNED), and each server must be refused the Create of an id the
// other has just created, whose creator's next append must be stored.
func secondServe(h *harness) {
	if err := h.pause(); err != nil {
		h.t.Fatal(err)
	}
	defer h.resume()
	ctx := context.Background()
	p2, err := h.startServe()
	if err != nil {
		h.t.Fatalf("second-serve: %v", err)
	}
	c1, c2 := h.client(), client.New(p2.Addr(), client.Options{})
	defer func() {
		c2.Close()
		_ = p2.Signal(syscall.SIGTERM)
		if err := p2.Wait(exitTimeout); err != nil {
			h.t.Logf("second-serve: the second serve after SIGTERM: %v\n%s", err, tail(p2.Log(), 2000))
			_ = p2.Kill9(exitTimeout)
		}
	}()
	if w := h.heldWriter(ctx); w != nil {
		intruder := event{pid: h.newID("intruder-"), text: "a second server"}
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		_, err := c2.Session(w.session().id).Append(cctx, inTurn(intruderTurn, []event{intruder})...)
		cancel()
		if !isCode(err, sdk.CodeAlreadyOwned) {
			h.problem(fmt.Errorf("second-serve: Append of %s, held by the first serve, on the second: %v (want ALREADY_OWNED)", w.session().id, err))
		}
	}
	for i, pair := range [][2]*client.Client{{c1, c2}, {c2, c1}} {
		creator, other := pair[0], pair[1]
		id := h.newID("y")
		rec := h.created(ctx, creator, id)
		if rec == nil {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		_, err := other.Create(cctx, id, events.CreateOptions{})
		cancel()
		if !isCode(err, sdk.CodeSessionAlreadyExists) && !isCode(err, sdk.CodeAlreadyOwned) {
			h.problem(fmt.Errorf("second-serve: Create of %s on serve %d after serve %d created it: %v (want SESSION_ALREADY_EXISTS)", id, 2-i, 1+i, err))
		}
		h.appendOne(ctx, creator, rec, "second-serve")
	}
}

// intruderTurn numbers a second writer's turn: above every turn of a
// writer, so that an append the lock let through would be stored.
const intruderTurn = 1 << 40

// heldWriter returns a writer whose session serve holds (live), or nil.
func (h *harness) heldWriter(ctx context.Context) *writer {
	c := h.client()
	for _, k := range h.rng.Perm(len(h.writers)) {
		w := h.writers[k]
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		_, in, err := c.Inspect(cctx, w.session().id)
		cancel()
		if err == nil && in.Live {
			return w
		}
	}
	h.t.Log("no writer's session is live in serve: the second writer's append is left out")
	return nil
}

// created creates session id through c and returns its record, added to
// the run's sessions; nil (and a problem) when the Create failed.
func (h *harness) created(ctx context.Context, c *client.Client, id string) *record {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if _, err := c.Create(cctx, id, events.CreateOptions{}); err != nil {
		h.problem(fmt.Errorf("Create of a new id %s: %v", id, err))
		return nil
	}
	rec := newRecord(id)
	h.extra = append(h.extra, rec)
	return rec
}

// appendOne appends one event with flush to rec's session through c: after
// a refused second writer it must be acknowledged (and then stored).
func (h *harness) appendOne(ctx context.Context, c *client.Client, rec *record, kind string) {
	e := event{pid: rec.id + "-0", text: "after a refused second writer"}
	rec.send([]event{e})
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	sess := c.Session(rec.id)
	res, err := sess.Append(cctx, inTurn(1, []event{e})...)
	if err == nil {
		err = sess.Flush(cctx)
	}
	if err != nil {
		h.problem(fmt.Errorf("%s: Append to %s after the second writer was refused: %v", kind, rec.id, err))
		return
	}
	s, err := parseEnvelope(res[1].Envelope) // after the turn/start
	if err == nil {
		err = rec.ack(e.pid, s.seq)
	}
	if err != nil {
		h.problem(err)
	}
	rec.retire() // nothing appends to it again
}

// isCode reports whether err carries code.
func isCode(err error, code sdk.Code) bool { return err != nil && sdk.CodeOf(err) == code }
