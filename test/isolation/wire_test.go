package isolation

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"
)

// callTimeout bounds one call of the walk: none of them waits for
// anything (no follow), so one that takes longer hangs.
const callTimeout = 20 * time.Second

// answer is what a call got, reduced to what the walk compares.
type answer struct {
	// Status is the HTTP status; for gRPC, and for a Connect stream's
	// end-of-stream error, the HTTP status of the code (Connect's
	// mapping).
	Status int
	// Code is the logbook error code (a /v1 problem's code, the ErrorInfo
	// reason of Connect and gRPC), "" when there is none.
	Code string
	// Body is the error body with every id the walk used masked, members
	// sorted: two answers that differ only in the id they name are equal.
	Body string
}

func (a answer) String() string { return fmt.Sprintf("%d %s %s", a.Status, a.Code, a.Body) }

// mask replaces every occurrence of the ids in the strings of v with
// {id}, recursively.
func mask(v any, ids []string) any {
	switch x := v.(type) {
	case string:
		for _, id := range ids {
			x = strings.ReplaceAll(x, id, "{id}")
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = mask(e, ids)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = mask(e, ids)
		}
		return out
	}
	return v
}

// masked renders v with the ids masked, as canonical-enough JSON (sorted
// members); longer ids are masked first so that one id containing
// another is masked whole.
func masked(v any, ids []string) string {
	ids = append([]string(nil), ids...)
	sort.Slice(ids, func(i, j int) bool { return len(ids[i]) > len(ids[j]) })
	b, err := json.Marshal(mask(v, ids))
	if err != nil {
		return fmt.Sprintf("unmarshalable %v", v)
	}
	return string(b)
}

// v1Answer reads a /v1 answer: an error body is a problem document
// (docs/openapi.json, Problem) whose code is the logbook code; a body
// that is not JSON is kept as text.
func v1Answer(status int, body []byte, ids []string) answer {
	a := answer{Status: status}
	var doc any
	if json.Unmarshal(body, &doc) != nil {
		a.Body = masked(string(body), ids)
		return a
	}
	if obj, ok := doc.(map[string]any); ok && status >= 400 {
		a.Code, _ = obj["code"].(string)
	}
	if status < 400 {
		a.Body = "" // a success's body is the route's own; the walk does not compare it
		return a
	}
	a.Body = masked(doc, ids)
	return a
}

// connectCodes maps Connect's and gRPC's code names to the HTTP status
// Connect's protocol gives them.
var connectCodes = map[string]int{
	"canceled": 499, "unknown": 500, "invalid_argument": 400, "deadline_exceeded": 504,
	"not_found": 404, "already_exists": 409, "permission_denied": 403, "resource_exhausted": 429,
	"failed_precondition": 400, "aborted": 409, "out_of_range": 400, "unimplemented": 501,
	"internal": 500, "unavailable": 503, "data_loss": 500, "unauthenticated": 401,
}

// connectError reads a Connect error object ({code, message, details}):
// each detail's value is decoded (an ErrorInfo becomes its JSON, whose
// reason is the logbook code) so masking reaches the ids inside it.
func connectError(httpStatus int, obj map[string]any, ids []string) answer {
	a := answer{Status: httpStatus}
	code, _ := obj["code"].(string)
	if s, ok := connectCodes[code]; ok && httpStatus == http.StatusOK {
		a.Status = s
	}
	details, _ := obj["details"].([]any)
	decoded := make([]any, 0, len(details))
	for _, d := range details {
		dm, _ := d.(map[string]any)
		typ, _ := dm["type"].(string)
		val, _ := dm["value"].(string)
		raw, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(val, "="))
		if err != nil || typ != "google.rpc.ErrorInfo" {
			decoded = append(decoded, map[string]any{"type": typ, "value": val})
			continue
		}
		var info errdetails.ErrorInfo
		if proto.Unmarshal(raw, &info) != nil {
			decoded = append(decoded, map[string]any{"type": typ, "value": val})
			continue
		}
		if info.GetDomain() == "logbook" {
			a.Code = info.GetReason()
		}
		decoded = append(decoded, map[string]any{"type": typ, "value": errorInfoJSON(&info)})
	}
	a.Body = masked(map[string]any{"code": code, "message": obj["message"], "details": decoded}, ids)
	return a
}

// errorInfoJSON is info as a JSON value.
func errorInfoJSON(info *errdetails.ErrorInfo) any {
	b, _ := protojson.Marshal(info)
	var v any
	_ = json.Unmarshal(b, &v)
	return v
}

// doHTTP sends req, bounded by callTimeout, and reads the whole answer.
func doHTTP(ctx context.Context, hc *http.Client, req *http.Request) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	resp, err := hc.Do(req.WithContext(ctx))
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// v1 makes the /v1 call c against base with token; tenant, when not "",
// is sent as ?tenant=.
func v1(ctx context.Context, hc *http.Client, base, token, tenant string, c call, ids []string) (answer, error) {
	if tenant != "" {
		c.Target = withTenant(c.Target, tenant)
	}
	req, err := c.httpRequest(base, token)
	if err != nil {
		return answer{}, err
	}
	st, body, err := doHTTP(ctx, hc, req)
	if err != nil {
		return answer{}, fmt.Errorf("%s: %w", c.Name, err)
	}
	return v1Answer(st, body, ids), nil
}

// connectJSON makes the Sessions call c with Connect's JSON over HTTP:
// a unary method as one application/json POST, a streaming one as
// application/connect+json with enveloped messages (the request as the
// only message). tenant, when not "", goes in the Logbook-Tenant header.
func connectJSON(ctx context.Context, hc *http.Client, base, token, tenant string, c rpcCall, ids []string) (answer, error) {
	msg, err := c.JSON()
	if err != nil {
		return answer{}, err
	}
	streaming := c.Method.IsStreamingClient() || c.Method.IsStreamingServer()
	body, ctype := msg, "application/json"
	if streaming {
		body, ctype = envelope(0, msg), "application/connect+json"
	}
	req, err := http.NewRequest(http.MethodPost, base+c.Procedure(), bytes.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Content-Type", ctype)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if tenant != "" {
		req.Header.Set("Logbook-Tenant", tenant)
	}
	st, out, err := doHTTP(ctx, hc, req)
	if err != nil {
		return answer{}, fmt.Errorf("Connect %s: %w", c.Method.Name(), err)
	}
	if !streaming || st != http.StatusOK {
		var obj map[string]any
		if st >= 400 && json.Unmarshal(out, &obj) == nil {
			return connectError(st, obj, ids), nil
		}
		return v1Answer(st, out, ids), nil
	}
	end, err := endOfStream(out)
	if err != nil {
		return answer{}, fmt.Errorf("Connect %s: %w", c.Method.Name(), err)
	}
	if end == nil {
		return answer{Status: http.StatusOK}, nil
	}
	return connectError(http.StatusOK, end, ids), nil
}

// envelope frames one message of a Connect stream: flags, big-endian
// length, the message.
func envelope(flags byte, msg []byte) []byte {
	out := make([]byte, 5, 5+len(msg))
	out[0] = flags
	binary.BigEndian.PutUint32(out[1:], uint32(len(msg)))
	return append(out, msg...)
}

// endOfStream walks the envelopes of a Connect stream's answer and
// returns the end-of-stream message's error object (nil when the stream
// ended without one).
func endOfStream(b []byte) (map[string]any, error) {
	for len(b) > 0 {
		if len(b) < 5 {
			return nil, fmt.Errorf("a torn envelope of %d bytes", len(b))
		}
		flags, n := b[0], binary.BigEndian.Uint32(b[1:5])
		if uint32(len(b)-5) < n {
			return nil, fmt.Errorf("an envelope of %d bytes with %d left", n, len(b)-5)
		}
		msg := b[5 : 5+n]
		b = b[5+n:]
		if flags&0x02 == 0 {
			continue
		}
		var end struct {
			Error map[string]any `json:"error"`
		}
		if err := json.Unmarshal(msg, &end); err != nil {
			return nil, fmt.Errorf("end of stream %q: %w", msg, err)
		}
		return end.Error, nil
	}
	return nil, errors.New("the stream has no end-of-stream message")
}

// grpcStatus maps a gRPC code to the HTTP status Connect gives it, so
// the walk's checks read the same on every protocol.
func grpcStatus(c codes.Code) int {
	if c == codes.OK {
		return http.StatusOK
	}
	// codes.Code's String is CamelCase (NotFound); Connect's names are
	// snake_case (not_found).
	var b strings.Builder
	for i, r := range c.String() {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	if s, ok := connectCodes[strings.ToLower(b.String())]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// dialGRPC connects to addr (host:port) without TLS; the connection is
// lazy and closed by the caller.
func dialGRPC(addr string) (*grpc.ClientConn, error) {
	return grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
}

// grpcCall makes the Sessions call c over gRPC: unary with Invoke, a
// stream with the request as its only message, read to its end.
func grpcCall(ctx context.Context, conn *grpc.ClientConn, token, tenant string, c rpcCall, ids []string) (answer, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	var md []string
	if token != "" {
		md = append(md, "authorization", "Bearer "+token)
	}
	if tenant != "" {
		md = append(md, "logbook-tenant", tenant)
	}
	ctx = metadata.AppendToOutgoingContext(ctx, md...)
	reply := dynamicpb.NewMessage(c.Method.Output())
	var err error
	if !c.Method.IsStreamingClient() && !c.Method.IsStreamingServer() {
		err = conn.Invoke(ctx, c.Procedure(), c.Request, reply)
	} else {
		err = grpcStream(ctx, conn, c, reply)
	}
	st := status.Convert(err)
	if ctx.Err() != nil && st.Code() == codes.DeadlineExceeded {
		return answer{}, fmt.Errorf("gRPC %s: no answer within %s", c.Method.Name(), callTimeout)
	}
	a := answer{Status: grpcStatus(st.Code())}
	if st.Code() == codes.OK {
		return a, nil
	}
	var details []any
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			if info.GetDomain() == "logbook" {
				a.Code = info.GetReason()
			}
			details = append(details, errorInfoJSON(info))
			continue
		}
		details = append(details, fmt.Sprintf("%T", d))
	}
	a.Body = masked(map[string]any{"code": st.Code().String(), "message": st.Message(), "details": details}, ids)
	return a, nil
}

// grpcStream sends c's request as a stream's only message and reads the
// answers to the end.
func grpcStream(ctx context.Context, conn *grpc.ClientConn, c rpcCall, reply *dynamicpb.Message) error {
	desc := &grpc.StreamDesc{StreamName: string(c.Method.Name()), ClientStreams: c.Method.IsStreamingClient(), ServerStreams: c.Method.IsStreamingServer()}
	s, err := conn.NewStream(ctx, desc, c.Procedure())
	if err != nil {
		return err
	}
	if err := s.SendMsg(c.Request); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if err := s.CloseSend(); err != nil {
		return err
	}
	for {
		if err := s.RecvMsg(reply); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}
