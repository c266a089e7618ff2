package otlp

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"

	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// ScopeName is the instrumentation scope of every span.
const ScopeName = "github.com/seed-e5e476df/logbook"

// SchemaURL is the semantic conventions' schema the spans follow.
const SchemaURL = semconv.SchemaURL

// ResourceSpans wraps spans in the resource service.name = "logbook" and
// the logbook instrumentation scope, with SchemaURL.
func ResourceSpans(spans []*tracepb.Span) *tracepb.ResourceSpans {
	return &tracepb.ResourceSpans{
		Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{
			str(string(semconv.ServiceNameKey), "logbook"),
		}},
		ScopeSpans: []*tracepb.ScopeSpans{{
			Scope:     &commonpb.InstrumentationScope{Name: ScopeName},
			Spans:     spans,
			SchemaUrl: SchemaURL,
		}},
		SchemaUrl: SchemaURL,
	}
}

// Request wraps resource spans in an ExportTraceServiceRequest.
func Request(rs *tracepb.ResourceSpans) *coltracepb.ExportTraceServiceRequest {
	return &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{rs}}
}

// JSON renders a request as OTLP/JSON: the protobuf JSON mapping with the
// two changes the OTLP specification makes to it, enums as numbers and
// trace and span ids as hex strings (protojson alone writes base64).
func JSON(r *coltracepb.ExportTraceServiceRequest) ([]byte, error) {
	b, err := protojson.MarshalOptions{UseEnumNumbers: true}.Marshal(r)
	if err != nil {
		return nil, err
	}
	return recodeIDs(b, base64ToHex)
}

// ParseJSON reads OTLP/JSON as JSON writes it (ids in hex).
func ParseJSON(b []byte) (*coltracepb.ExportTraceServiceRequest, error) {
	b, err := recodeIDs(b, hexToBase64)
	if err != nil {
		return nil, err
	}
	r := &coltracepb.ExportTraceServiceRequest{}
	return r, protojson.Unmarshal(b, r)
}

// idKeys are the members that hold a trace or span id in OTLP/JSON.
var idKeys = map[string]bool{"traceId": true, "spanId": true, "parentSpanId": true}

// recodeIDs rewrites every id member of an OTLP/JSON document with conv.
// The document is decoded generically (numbers kept as written) and
// encoded again; protojson writes 64-bit integers as strings, so nothing
// loses precision.
func recodeIDs(b []byte, conv func(string) (string, error)) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if err := walkIDs(v, conv); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func walkIDs(v any, conv func(string) (string, error)) error {
	switch x := v.(type) {
	case map[string]any:
		for k, m := range x {
			if s, ok := m.(string); ok && idKeys[k] {
				c, err := conv(s)
				if err != nil {
					return fmt.Errorf("otlp: %s %q: %w", k, s, err)
				}
				x[k] = c
				continue
			}
			if err := walkIDs(m, conv); err != nil {
				return err
			}
		}
	case []any:
		for _, m := range x {
			if err := walkIDs(m, conv); err != nil {
				return err
			}
		}
	}
	return nil
}

func base64ToHex(s string) (string, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	return hex.EncodeToString(b), err
}

func hexToBase64(s string) (string, error) {
	b, err := hex.DecodeString(s)
	return base64.StdEncoding.EncodeToString(b), err
}
