package server_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/seed-e5e476df/logbook/docs"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
)

// parityEntry is one operation of the API on both transports.
type parityEntry struct {
	rpc       string // the method of logbook.v1.Sessions; "" for none
	operation string // the operationId in docs/openapi.json; "" for none
	note      string // why a side is empty, or how the two differ in form
}

// parity pairs every method of logbook.v1.Sessions with the /v1 operation
// (its operationId in docs/openapi.json) that offers the same thing. An
// entry with an empty side is a deliberate difference, and its note says
// why; docs/operations.md ("One API, two transports") repeats the list.
var parity = []parityEntry{
	{"Create", "createSession", ""},
	{"Open", "openSession", ""},
	{"Append", "appendEvents", ""},
	{"AppendStream", "appendEvents", "a stream of requests on one session is, on /v1, one NDJSON body of any length, appended in batches as it arrives"},
	{"AppendGroup", "appendGroup", ""},
	{"Messages", "messages", ""},
	{"Transcript", "transcript", ""},
	{"Surface", "surface", ""},
	{"Header", "getSession", "the stored header and the log length; /v1's GET …/header is the request header (RequestHeader)"},
	{"RequestHeader", "requestHeader", ""},
	{"Request", "request", ""},
	{"Events", "readEvents", ""},
	{"Fork", "fork", ""},
	{"Flush", "flush", ""},
	{"Compact", "compact", ""},
	{"Inspect", "inspect", ""},
	{"List", "listSessions", ""},
	{"Release", "release", ""},
	{"Delete", "deleteSession", ""},
	{"Hold", "hold", ""},
	{"ReleaseHold", "releaseHold", ""},
	{"Why", "why", ""},
	{"Shadowed", "shadowed", ""},
	{"Tokens", "tokens", ""},
	{"Lineage", "lineage", ""},
	{"", "whoami", "the credential's name, tenant and role: a Connect client knows the credential it sends"},
	{"", "listTenants", "the tenants an operator may address: a question about the server, not a session, asked by the viewer's tenant picker; a Connect client names its tenant in Logbook-Tenant"},
	{"", "openapi", "the /v1 API's own description; a Connect client reads sessions.proto or asks the server's gRPC reflection"},
}

// Every method of the Connect service and every operation of the /v1 API
// has its counterpart in parity, or an entry there that says why not; the
// list names nothing that is gone.
func TestConnectAndV1OfferTheSameOperations(t *testing.T) {
	var rpcs []string
	methods := logbookv1.File_logbook_v1_sessions_proto.Services().ByName("Sessions").Methods()
	for i := range methods.Len() {
		rpcs = append(rpcs, string(methods.Get(i).Name()))
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(docs.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, byMethod := range doc.Paths {
		for method, raw := range byMethod {
			if method == "parameters" {
				continue
			}
			var op struct {
				OperationID string `json:"operationId"`
			}
			if err := json.Unmarshal(raw, &op); err != nil || op.OperationID == "" {
				t.Fatalf("an operation of docs/openapi.json has no operationId: %s", raw)
			}
			ops = append(ops, op.OperationID)
		}
	}
	for _, p := range parity {
		switch {
		case p.rpc == "" && p.operation == "":
			t.Errorf("a parity entry names neither side")
		case (p.rpc == "" || p.operation == "") && p.note == "":
			t.Errorf("parity entry %q/%q has one side only and no note saying why", p.rpc, p.operation)
		case p.rpc != "" && !slices.Contains(rpcs, p.rpc):
			t.Errorf("parity names the RPC %s, which logbook.v1.Sessions does not have", p.rpc)
		case p.operation != "" && !slices.Contains(ops, p.operation):
			t.Errorf("parity names the /v1 operation %s, which docs/openapi.json does not have", p.operation)
		}
	}
	for _, rpc := range rpcs {
		if !slices.ContainsFunc(parity, func(p parityEntry) bool { return p.rpc == rpc }) {
			t.Errorf("logbook.v1.Sessions/%s has no /v1 operation: add one (docs/openapi.json) or a parity entry saying why not", rpc)
		}
	}
	for _, op := range ops {
		if !slices.ContainsFunc(parity, func(p parityEntry) bool { return p.operation == op }) {
			t.Errorf("the /v1 operation %s has no logbook.v1.Sessions method: add one (sessions.proto) or a parity entry saying why not", op)
		}
	}
}
