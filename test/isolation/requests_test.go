package isolation

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// call is one request of the walk, built without a server: a /v1 route
// or a Sessions method, aimed at a session id (or none).
type call struct {
	Name   string // what a failure names: "GET /v1/sessions/{id}/events" or "Connect Events"
	Role   role   // the role it requires
	Method string // HTTP method, for a /v1 route
	// Target is the path and query, with the session id in place.
	Target   string
	BodyType string
	Body     []byte
	// NamesSession says the call names a session (its path or request
	// carries the id); the tenant checks need one.
	NamesSession bool
	// Creates says the id names the session the call makes.
	Creates bool
	// Missing is the code an id that exists nowhere gets.
	Missing string
}

// routeCall builds the request of route r on session id.
func (s *spec) routeCall(r route, id string) (call, error) {
	c, ok := routeCases[r.OperationID]
	if !ok {
		return call{}, fmt.Errorf("%s has no case", r.OperationID)
	}
	out := call{Name: r.Method + " " + r.Path, Role: c.Role, Method: r.Method, BodyType: r.BodyType, Missing: orNotFound(c.Missing)}
	path := r.Path
	q := url.Values{}
	for _, p := range r.Params {
		switch p.In {
		case "path":
			if p.Name != "id" {
				return call{}, fmt.Errorf("%s: path parameter %s: the walk substitutes only {id}; teach it this one", r.OperationID, p.Name)
			}
			path = strings.ReplaceAll(path, "{id}", url.PathEscape(id))
			out.NamesSession = true
		case "query":
			if !p.Required {
				continue
			}
			v, ok := s.queryValue(p)
			if !ok {
				return call{}, fmt.Errorf("%s: required query parameter %s: no minimal value from its schema; give it in the case's Query", r.OperationID, p.Name)
			}
			q.Set(p.Name, v)
		case "header":
			if p.Required {
				return call{}, fmt.Errorf("%s: required header %s: the walk sends none; teach it this one", r.OperationID, p.Name)
			}
		}
	}
	if c.Query != "" {
		extra, err := url.ParseQuery(c.Query)
		if err != nil {
			return call{}, fmt.Errorf("%s: case Query %q: %w", r.OperationID, c.Query, err)
		}
		for k, vs := range extra {
			q[k] = vs
		}
	}
	out.Target = path
	if len(q) > 0 {
		out.Target += "?" + q.Encode()
	}
	switch {
	case c.Body != "":
		out.Body = []byte(c.Body)
	case r.BodyType == "application/json":
		v, ok := s.minimal(r.BodySchema)
		if !ok {
			return call{}, fmt.Errorf("%s: no minimal body from the schema; give it in the case's Body", r.OperationID)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return call{}, err
		}
		out.Body = b
	case r.BodyType != "":
		return call{}, fmt.Errorf("%s: a %s body cannot be derived; give it in the case's Body", r.OperationID, r.BodyType)
	}
	if c.CreateMember != "" {
		var body map[string]any
		if err := json.Unmarshal(out.Body, &body); err != nil || body == nil {
			return call{}, fmt.Errorf("%s: the body %q is not a JSON object to put %s in", r.OperationID, out.Body, c.CreateMember)
		}
		body[c.CreateMember] = id
		out.Body, _ = json.Marshal(body)
		out.Creates = true
	}
	return out, nil
}

// orNotFound is code, or SESSION_NOT_FOUND when it is "".
func orNotFound(code string) string {
	if code == "" {
		return notFound
	}
	return code
}

// withTenant adds ?tenant=name to a /v1 target (an operator's way to
// address another tenant).
func withTenant(target, name string) string {
	sep := "?"
	if strings.Contains(target, "?") {
		sep = "&"
	}
	return target + sep + "tenant=" + url.QueryEscape(name)
}

// httpRequest is c as a request to base (http://host:port) with the
// bearer token ("" = none).
func (c call) httpRequest(base, token string) (*http.Request, error) {
	req, err := http.NewRequest(c.Method, base+c.Target, bytes.NewReader(c.Body))
	if err != nil {
		return nil, err
	}
	if c.BodyType != "" {
		req.Header.Set("Content-Type", c.BodyType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req, nil
}

// rpcCall is one Sessions method call: the method, its request and the
// role it requires.
type rpcCall struct {
	Method       protoreflect.MethodDescriptor
	Role         role
	Request      *dynamicpb.Message
	NamesSession bool   // the request names a session to look up
	Creates      bool   // the request names the session it makes
	Missing      string // the code an id that exists nowhere gets
}

// Procedure is the method's path: /logbook.v1.Sessions/Name.
func (c rpcCall) Procedure() string {
	return "/" + string(c.Method.Parent().FullName()) + "/" + string(c.Method.Name())
}

// methodCall builds the request of method m on session id: the case's
// hand-written part, then the session field set to id.
func methodCall(m protoreflect.MethodDescriptor, id string) (rpcCall, error) {
	c, ok := methodCases[m.Name()]
	if !ok {
		return rpcCall{}, fmt.Errorf("%s has no case", m.Name())
	}
	req := dynamicpb.NewMessage(m.Input())
	if c.Request != "" {
		if err := protojson.Unmarshal([]byte(c.Request), req); err != nil {
			return rpcCall{}, fmt.Errorf("%s: case Request: %w", m.Name(), err)
		}
	}
	out := rpcCall{Method: m, Role: c.Role, Request: req, Creates: c.Creates, Missing: orNotFound(c.Missing)}
	if f := sessionField(m, c); f != nil {
		req.Set(f, protoreflect.ValueOfString(id))
		out.NamesSession = !c.Creates
	}
	return out, nil
}

// JSON is the request in protobuf JSON, as Connect's JSON codec sends it.
func (c rpcCall) JSON() ([]byte, error) { return protojson.Marshal(c.Request) }

// Binary is the request in the protobuf wire format, as gRPC sends it.
func (c rpcCall) Binary() ([]byte, error) { return proto.Marshal(c.Request) }
