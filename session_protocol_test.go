package logbook_test

import (
	"context"
	"testing"

	"github.com/seed-e5e476df/logbook"
	"github.com/seed-e5e476df/logbook/internal/protocolcases"
	"github.com/seed-e5e476df/logbook/sdk"
)

// The agent-loop rules through the embedder's door, Session.Append and
// AppendGroup: each rule refuses its event and changes nothing, alone and
// as a group member, and the legal patterns are accepted.
func TestProtocolCases(t *testing.T) {
	protocolcases.Run(t, embedDoor{openMemory(t)}, protocolcases.Options{Groups: true, Lenient: true})
}

// embedDoor drives a logbook.Runtime.
type embedDoor struct{ rt *logbook.Runtime }

func (d embedDoor) Create(t testing.TB, id string, lenient bool) protocolcases.Session {
	s, err := d.rt.Create(context.Background(), id, protocolcases.CreateOptions(lenient))
	if err != nil {
		t.Fatal(err)
	}
	protocolcases.RequireProtocol(t, s.Header(), lenient)
	return embedSession{s}
}

// embedSession is a session of the runtime.
type embedSession struct{ s *logbook.Session }

func (s embedSession) Append(t testing.TB, ins []protocolcases.Input) ([]sdk.Seq, *protocolcases.Refusal) {
	evs, err := s.s.Append(context.Background(), protocolcases.Inputs(ins)...)
	return protocolcases.Seqs(evs), protocolcases.RefusalOf(t, err)
}

func (s embedSession) AppendGroup(t testing.TB, ins []protocolcases.Input) ([]sdk.Seq, *protocolcases.Refusal) {
	evs, err := s.s.AppendGroup(context.Background(), protocolcases.Inputs(ins)...)
	return protocolcases.Seqs(evs), protocolcases.RefusalOf(t, err)
}

func (s embedSession) Log(testing.TB) []string { return protocolcases.Log(s.s.Events()) }
