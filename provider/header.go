package provider

import (
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// header is the part of a folded request header (EpochHeader) a request
// body needs.
type header struct {
	model       string
	maxTokens   jsonv.Value // absent when not set
	temperature jsonv.Value
	stop        jsonv.Value
	effort      string
	tools       jsonv.Value // an array, or absent
}

// parseHeader reads an EpochHeader: REQUEST_HEADER_MISSING when raw is
// empty or null (there is no request without a header: it names the
// model), PAYLOAD_INVALID when it is not a JSON object or its config has
// no model.
func parseHeader(raw []byte) (header, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return header{}, sdk.Errorf(sdk.CodeRequestHeaderMissing, op,
			"no request header: a provider's request needs the header's model; append a request/header event, or ask for the logbook format")
	}
	doc, err := jsonv.Parse(raw, jsonv.Options{})
	if err != nil {
		return header{}, sdk.Wrapf(sdk.CodePayloadInvalid, op, err, "the request header is not valid JSON")
	}
	root := doc.Root()
	cfg := root.Get("config")
	h := header{tools: root.Get("tools")}
	h.model, _ = cfg.Get("model").Str()
	if root.Kind() != jsonv.Object || h.model == "" {
		return header{}, sdk.Errorf(sdk.CodePayloadInvalid, op, "the request header has no config.model")
	}
	h.maxTokens = cfg.Get("maxTokens")
	h.temperature = cfg.Get("temperature")
	h.stop = cfg.Get("stop")
	h.effort, _ = cfg.Get("reasoningEffort").Str()
	if h.tools.Exists() && h.tools.Kind() != jsonv.Array {
		return header{}, sdk.Errorf(sdk.CodePayloadInvalid, op, "the request header's tools are not an array")
	}
	return h, nil
}

// parseRequest reads the header and the messages of a request body.
func parseRequest(raw []byte, msgs [][]byte) (header, []message, error) {
	h, err := parseHeader(raw)
	if err != nil {
		return header{}, nil, err
	}
	ms, err := conversation(msgs)
	return h, ms, err
}

// appendToolName appends the name and, when it has one, the description of
// the header's tool t (a ToolSchema).
func appendToolName(b []byte, t jsonv.Value) []byte {
	name, _ := t.Get("name").Str()
	b = appendStr(b, "name", name)
	if d, ok := t.Get("description").Str(); ok {
		b = appendStr(b, "description", d)
	}
	return b
}

// HeaderJSON returns the EpochHeader JSON of h, byte for byte as a
// request/header event of h records it: the header that Request and the
// request builders take, for an embedder that holds the header value it
// wrote rather than the folded header of a session. Parameters that are
// not JSON are PAYLOAD_INVALID.
func HeaderJSON(h events.Header) ([]byte, error) {
	doc, err := jsonv.Parse(events.RequestHeader(h, events.HeaderInitial).Data, jsonv.Options{})
	if err != nil {
		return nil, sdk.Wrapf(sdk.CodePayloadInvalid, op, err, "the header is not valid JSON (a tool's parameters?)")
	}
	return doc.Root().Get("header").Bytes(), nil
}
