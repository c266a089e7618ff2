package client_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/internal/protocolcases"
	"github.com/seed-e5e476df/logbook/sdk"
)

// The agent-loop rules through the Go client and the test daemon: each
// rule's event fails with an *AppendError that appended nothing, around
// the rule's *sdk.Error, and changes nothing, alone and as an AppendGroup
// member; the legal patterns are accepted, a lenient session accepts the
// refused events, and the operation cases append once with AppendOnce.
func TestClientProtocolCases(t *testing.T) {
	c := client.New("http://"+daemon, client.Options{})
	t.Cleanup(c.Close)
	protocolcases.Run(t, clientDoor{c}, protocolcases.Options{Groups: true, Lenient: true, Operations: true})
}

// clientDoor drives a client; its session ids start with "protocol-", apart
// from the other tests' on the daemon.
type clientDoor struct{ c *client.Client }

func (d clientDoor) Create(t testing.TB, id string, lenient bool) protocolcases.Session {
	s, err := d.c.Create(context.Background(), "protocol-"+id, protocolcases.CreateOptions(lenient))
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.Header(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	protocolcases.RequireProtocol(t, h, lenient)
	return clientSession{s}
}

// clientSession is a session handle of the client.
type clientSession struct{ s *client.Session }

func (s clientSession) Append(t testing.TB, ins []protocolcases.Input) ([]sdk.Seq, *protocolcases.Refusal) {
	evs, err := s.s.Append(context.Background(), protocolcases.Inputs(ins)...)
	return protocolcases.Seqs(evs), refusal(t, err)
}

func (s clientSession) AppendGroup(t testing.TB, ins []protocolcases.Input) ([]sdk.Seq, *protocolcases.Refusal) {
	evs, err := s.s.AppendGroup(context.Background(), protocolcases.Inputs(ins)...)
	return protocolcases.Seqs(evs), refusal(t, err)
}

func (s clientSession) AppendOnce(t testing.TB, id string, ins []protocolcases.Input) ([]sdk.Seq, bool, *protocolcases.Refusal) {
	res, err := s.s.AppendOnce(context.Background(), id, protocolcases.Inputs(ins)...)
	if err != nil {
		return nil, false, refusal(t, err)
	}
	return protocolcases.Seqs(res.Events), res.Replayed, nil
}

// refusal is the refusal of a failed append; a rule's refusal, and an
// operation's, is an *AppendError that appended nothing.
func refusal(t testing.TB, err error) *protocolcases.Refusal {
	t.Helper()
	r := protocolcases.RefusalOf(t, err)
	if r == nil || !slices.Contains(protocolcases.Codes, r.Code) && r.Code != sdk.CodeOperationConflict && r.Code != sdk.CodeOperationIDInvalid {
		return r
	}
	var ae *client.AppendError
	if !errors.As(err, &ae) || ae.Appended != 0 {
		t.Errorf("%s: %v; want an *AppendError that appended nothing", r.Code, err)
	}
	return r
}

func (s clientSession) Log(t testing.TB) []string {
	evs, err := s.s.Events(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return protocolcases.Log(evs)
}
