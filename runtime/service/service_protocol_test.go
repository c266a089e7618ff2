package service_test

import (
	"context"
	"testing"

	"github.com/seed-e5e476df/logbook/internal/protocolcases"
	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
)

// The agent-loop rules at the service, the door every other one calls:
// each rule refuses its event and changes nothing, alone and as a group
// member, and the legal patterns are accepted.
func TestProtocolCases(t *testing.T) {
	protocolcases.Run(t, serviceDoor{openMemory(t)}, protocolcases.Options{Groups: true, Lenient: true})
}

// serviceDoor drives a service.Service.
type serviceDoor struct{ svc *service.Service }

func (d serviceDoor) Create(t testing.TB, id string, lenient bool) protocolcases.Session {
	s, err := d.svc.Create(context.Background(), service.CreateRequest{ID: id, Header: protocolcases.CreateOptions(lenient)})
	if err != nil {
		t.Fatal(err)
	}
	protocolcases.RequireProtocol(t, s.Header(), lenient)
	return serviceSession{s}
}

// serviceSession is a session held through the service.
type serviceSession struct{ s *service.Session }

func (s serviceSession) Append(t testing.TB, ins []protocolcases.Input) ([]sdk.Seq, *protocolcases.Refusal) {
	return s.append(t, service.AppendRequest{Inputs: protocolcases.Inputs(ins)})
}

func (s serviceSession) AppendGroup(t testing.TB, ins []protocolcases.Input) ([]sdk.Seq, *protocolcases.Refusal) {
	return s.append(t, service.AppendRequest{Inputs: protocolcases.Inputs(ins), Group: true})
}

func (s serviceSession) append(t testing.TB, r service.AppendRequest) ([]sdk.Seq, *protocolcases.Refusal) {
	res, err := s.s.Append(context.Background(), r)
	return protocolcases.Seqs(res.Events), protocolcases.RefusalOf(t, err)
}

func (s serviceSession) Log(testing.TB) []string { return protocolcases.Log(s.s.Events()) }
