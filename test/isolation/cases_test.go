package isolation

import (
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
)

// role is a credential's role (docs/operations.md, "Security model"): each
// one may do what the one before it may, and more.
type role int

// The roles, lowest first.
const (
	roleRead role = iota
	roleWrite
	roleAdmin
	roleOperator
)

// roles are every role, lowest first.
var roles = []role{roleRead, roleWrite, roleAdmin, roleOperator}

// String is the role's name as `logbook token create --role` takes it.
func (r role) String() string {
	return [...]string{"read", "write", "admin", "operator"}[r]
}

// below are the roles lower than r: each must be refused with 403.
func (r role) below() []role { return roles[:r] }

// routeCase is what the walk needs to know of a /v1 route beyond
// docs/openapi.json: the role it requires and whatever of its request the
// schema cannot give.
type routeCase struct {
	Role role
	// Query is added to the route's required query parameters (which are
	// derived from their schemas).
	Query string
	// Body is the request body, by hand; "" derives it from the schema.
	Body string
	// Missing is the code the route answers for an id that exists
	// nowhere; "" = SESSION_NOT_FOUND. B's session must get the same.
	Missing string
	// CreateMember is the member of the JSON body that names the session
	// the call makes ("" = none): the tenant check is then that A may
	// make an id B already has.
	CreateMember string
}

// notFound is what most routes answer for a session id that exists
// nowhere; notLive what flush and release answer (they act on live
// sessions only).
const (
	notFound = "SESSION_NOT_FOUND"
	notLive  = "SESSION_NOT_LIVE"
)

// appendLine is an append input every session accepts first: a turn's
// start.
const appendLine = `{"type":"turn/start","data":{"turn":1}}` + "\n"

// routeCases holds a case for every operation of docs/openapi.json, by
// operationId. A route without one fails TestEveryRouteHasACase, so a route
// added to the API cannot skip the walk.
var routeCases = map[string]routeCase{
	"createSession": {Role: roleWrite, CreateMember: "id"},
	"listSessions":  {Role: roleRead},
	"getSession":    {Role: roleRead},
	"deleteSession": {Role: roleAdmin, Query: "reason=isolation"},
	"appendEvents":  {Role: roleWrite, Body: appendLine},
	"readEvents":    {Role: roleRead},
	"appendGroup":   {Role: roleWrite, Body: appendLine},
	"messages":      {Role: roleRead},
	"transcript":    {Role: roleRead},
	"surface":       {Role: roleRead},
	"requestHeader": {Role: roleRead},
	"request":       {Role: roleRead},
	"openSession":   {Role: roleWrite},
	"fork":          {Role: roleWrite},
	"flush":         {Role: roleWrite, Missing: notLive},
	"compact":       {Role: roleWrite},
	"release":       {Role: roleWrite, Missing: notLive},
	"hold":          {Role: roleAdmin, Body: `{"reason":"isolation"}`},
	"releaseHold":   {Role: roleAdmin, Body: `{"reason":"isolation"}`},
	"inspect":       {Role: roleRead},
	"why":           {Role: roleRead},
	"shadowed":      {Role: roleRead},
	"tokens":        {Role: roleRead},
	"lineage":       {Role: roleRead},
	"openapi":       {Role: roleRead},
	"whoami":        {Role: roleRead},
	"listTenants":   {Role: roleOperator},
}

// methodCase is what the walk needs to know of a logbook.v1.Sessions
// method beyond its descriptor.
type methodCase struct {
	Role role
	// SessionField names the request field that holds the session id;
	// "" = session_id when the request has it, else the method names no
	// session.
	SessionField protoreflect.Name
	// Creates says the session field names the session the call makes, not
	// one it looks up: the tenant check is then that A may make an id B
	// already has.
	Creates bool
	// Missing is the code the method answers for an id that exists
	// nowhere; "" = SESSION_NOT_FOUND. B's session must get the same.
	Missing string
	// Request is the rest of the request in protobuf JSON, by hand; ""
	// leaves every other field at its zero value.
	Request string
}

// appendEvent is appendLine as a Connect AppendInput.
const appendEvent = `{"events":[{"type":"turn/start","data":"{\"turn\":1}"}]}`

// methodCases holds a case for every method of logbook.v1.Sessions, by
// name. A method without one fails TestEveryMethodHasACase.
var methodCases = map[protoreflect.Name]methodCase{
	"Create":        {Role: roleWrite, Creates: true},
	"Open":          {Role: roleWrite},
	"Append":        {Role: roleWrite, Request: appendEvent},
	"AppendStream":  {Role: roleWrite, Request: appendEvent},
	"AppendGroup":   {Role: roleWrite, Request: appendEvent},
	"Messages":      {Role: roleRead},
	"Transcript":    {Role: roleRead},
	"Surface":       {Role: roleRead},
	"Header":        {Role: roleRead},
	"Events":        {Role: roleRead},
	"Fork":          {Role: roleWrite, SessionField: "source_id"},
	"Flush":         {Role: roleWrite, Missing: notLive},
	"Compact":       {Role: roleWrite},
	"Inspect":       {Role: roleRead},
	"List":          {Role: roleRead},
	"Release":       {Role: roleWrite, Missing: notLive},
	"RequestHeader": {Role: roleRead},
	"Request":       {Role: roleRead},
	"Why":           {Role: roleRead},
	"Shadowed":      {Role: roleRead},
	"Tokens":        {Role: roleRead},
	"Lineage":       {Role: roleRead},
	"Delete":        {Role: roleAdmin, Request: `{"reason":"isolation"}`},
	"Hold":          {Role: roleAdmin, Request: `{"reason":"isolation"}`},
	"ReleaseHold":   {Role: roleAdmin, Request: `{"reason":"isolation"}`},
}

// sessionsService is the descriptor of logbook.v1.Sessions, from the
// generated code.
func sessionsService() protoreflect.ServiceDescriptor {
	return logbookv1.File_logbook_v1_sessions_proto.Services().ByName("Sessions")
}

// Every operation of docs/openapi.json has a case, and every case an
// operation: a route added later without one fails here.
func TestEveryRouteHasACase(t *testing.T) {
	s, err := loadSpec(openapiPath)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range s.routes {
		seen[r.OperationID] = true
		if _, ok := routeCases[r.OperationID]; !ok {
			t.Errorf("%s %s (operationId %s) has no case in routeCases: add one with the role it requires, so the isolation walk covers it", r.Method, r.Path, r.OperationID)
		}
	}
	for id := range routeCases {
		if !seen[id] {
			t.Errorf("routeCases has %q, which docs/openapi.json does not define: remove it or add the route", id)
		}
	}
}

// Every method of logbook.v1.Sessions has a case, and every case a method;
// the session field a case names is a string field of the request.
func TestEveryMethodHasACase(t *testing.T) {
	methods := sessionsService().Methods()
	seen := map[protoreflect.Name]bool{}
	for i := range methods.Len() {
		m := methods.Get(i)
		seen[m.Name()] = true
		c, ok := methodCases[m.Name()]
		if !ok {
			t.Errorf("logbook.v1.Sessions/%s has no case in methodCases: add one with the role it requires, so the isolation walk covers it", m.Name())
			continue
		}
		if f := sessionField(m, c); f != nil && f.Kind() != protoreflect.StringKind {
			t.Errorf("%s: session field %s is %s, not a string", m.Name(), f.Name(), f.Kind())
		} else if f == nil && c.SessionField != "" {
			t.Errorf("%s: the request %s has no field %s", m.Name(), m.Input().FullName(), c.SessionField)
		}
	}
	for name := range methodCases {
		if !seen[name] {
			t.Errorf("methodCases has %q, which logbook.v1.Sessions does not define: remove it", name)
		}
	}
}

// sessionField is the request field of m that names the session, or nil
// when m names none.
func sessionField(m protoreflect.MethodDescriptor, c methodCase) protoreflect.FieldDescriptor {
	name := c.SessionField
	if name == "" {
		name = "session_id"
	}
	return m.Input().Fields().ByName(name)
}

// spansTenants are the routes that require an operator: they answer of
// every tenant at once (admin is within one tenant), so the walk checks
// that every lower role is refused.
var spansTenants = []string{"listTenants"}

// The role table of the walk names the operator's role only for a route
// that spans tenants (an operator is admin across tenants); no
// logbook.v1.Sessions method requires it.
func TestCasesNameARole(t *testing.T) {
	for id, c := range routeCases {
		if (c.Role == roleOperator) != slices.Contains(spansTenants, id) {
			t.Errorf("route %s requires %s: only the routes that span tenants (%s) require operator", id, c.Role, strings.Join(spansTenants, ", "))
		}
	}
	for name, c := range methodCases {
		if c.Role == roleOperator {
			t.Errorf("method %s requires operator", name)
		}
	}
	if got := strings.Join(rolesNames(roleAdmin.below()), ","); got != "read,write" {
		t.Errorf("below(admin) = %s", got)
	}
}

// rolesNames are the names of rs.
func rolesNames(rs []role) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.String())
	}
	return slices.Clip(out)
}
