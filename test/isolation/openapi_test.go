package isolation

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
)

// openapiPath is the API description the walk starts from, relative to
// this package's directory (where go test runs it).
const openapiPath = "../../docs/openapi.json"

// route is one operation of docs/openapi.json, as the walk needs it.
type route struct {
	Method      string // GET, POST, DELETE, …
	Path        string // as written: /v1/sessions/{id}/events
	OperationID string
	// Params are the operation's parameters (path and query), their $refs
	// resolved.
	Params []param
	// BodyType is the media type of the request body ("" = none);
	// BodySchema its schema, $refs left in place (resolved by minimal).
	BodyType   string
	BodySchema map[string]any
}

// param is one parameter of a route.
type param struct {
	Name     string
	In       string // path, query, header
	Required bool
	Schema   map[string]any
}

// spec is docs/openapi.json, decoded.
type spec struct {
	doc    map[string]any
	routes []route
}

// loadSpec reads and walks the API description.
func loadSpec(path string) (*spec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s := &spec{}
	if err := json.Unmarshal(b, &s.doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	paths, _ := s.doc["paths"].(map[string]any)
	if len(paths) == 0 {
		return nil, fmt.Errorf("%s: no paths", path)
	}
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		item, _ := paths[p].(map[string]any)
		shared, err := s.params(item["parameters"])
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", path, p, err)
		}
		for _, m := range slices.Sorted(maps.Keys(item)) {
			switch m {
			case "get", "put", "post", "delete", "patch", "head", "options", "trace":
			default:
				continue
			}
			op, _ := item[m].(map[string]any)
			r := route{Method: strings.ToUpper(m), Path: p}
			r.OperationID, _ = op["operationId"].(string)
			if r.OperationID == "" {
				return nil, fmt.Errorf("%s: %s %s has no operationId", path, r.Method, p)
			}
			own, err := s.params(op["parameters"])
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", path, r.OperationID, err)
			}
			r.Params = mergeParams(shared, own)
			if rb, ok := op["requestBody"].(map[string]any); ok {
				rb = s.resolve(rb)
				content, _ := rb["content"].(map[string]any)
				types := slices.Sorted(maps.Keys(content))
				if len(types) != 1 {
					return nil, fmt.Errorf("%s: %s: request body has %d media types, the walk knows one", path, r.OperationID, len(types))
				}
				r.BodyType = types[0]
				media, _ := content[r.BodyType].(map[string]any)
				r.BodySchema, _ = media["schema"].(map[string]any)
			}
			s.routes = append(s.routes, r)
		}
	}
	return s, nil
}

// params decodes a parameters list, resolving each $ref.
func (s *spec) params(v any) ([]param, error) {
	list, _ := v.([]any)
	var out []param
	for _, e := range list {
		m, _ := e.(map[string]any)
		m = s.resolve(m)
		p := param{}
		p.Name, _ = m["name"].(string)
		p.In, _ = m["in"].(string)
		p.Required, _ = m["required"].(bool)
		p.Schema, _ = m["schema"].(map[string]any)
		if p.Name == "" || p.In == "" {
			return nil, fmt.Errorf("a parameter without name or in: %v", m)
		}
		out = append(out, p)
	}
	return out, nil
}

// mergeParams is the path item's parameters overridden by the
// operation's (same name and location).
func mergeParams(shared, own []param) []param {
	out := slices.Clone(own)
	for _, p := range shared {
		if !slices.ContainsFunc(own, func(o param) bool { return o.Name == p.Name && o.In == p.In }) {
			out = append(out, p)
		}
	}
	return out
}

// resolve follows a local $ref ("#/components/…") until an object
// without one; an unresolvable ref yields nil.
func (s *spec) resolve(m map[string]any) map[string]any {
	for range 32 {
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		var cur any = s.doc
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			obj, _ := cur.(map[string]any)
			cur = obj[strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")]
		}
		m, _ = cur.(map[string]any)
	}
	return nil
}

// minimal returns the smallest value the schema accepts: an object with
// its required properties only, each minimal; the first enum value or
// const; a number at its minimum (or 0); "" for a string without
// minLength (else that many x); a boolean false; an array of minItems
// minimal items. A oneOf/anyOf takes its first choice, an allOf merges
// its objects. ok is false when the schema cannot be satisfied that way
// (a pattern or format the walk does not know): the route's case must
// then give the body by hand.
func (s *spec) minimal(schema map[string]any) (v any, ok bool) {
	schema = s.resolve(schema)
	if schema == nil {
		return nil, false
	}
	if c, has := schema["const"]; has {
		return c, true
	}
	if e, _ := schema["enum"].([]any); len(e) > 0 {
		return e[0], true
	}
	if all, _ := schema["allOf"].([]any); len(all) > 0 {
		merged := map[string]any{}
		for _, a := range all {
			v, ok := s.minimal(asObject(a))
			obj, isObj := v.(map[string]any)
			if !ok || !isObj {
				return nil, false
			}
			for k, x := range obj {
				merged[k] = x
			}
		}
		return merged, true
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if choices, _ := schema[k].([]any); len(choices) > 0 {
			return s.minimal(asObject(choices[0]))
		}
	}
	if _, has := schema["pattern"]; has {
		return nil, false
	}
	if _, has := schema["format"]; has && schema["type"] == "string" {
		return nil, false
	}
	switch t := schema["type"].(type) {
	case []any: // a list of types: the first
		if len(t) == 0 {
			return nil, false
		}
		c := maps.Clone(schema)
		c["type"] = t[0]
		return s.minimal(c)
	case string:
		switch t {
		case "object":
			props, _ := schema["properties"].(map[string]any)
			req, _ := schema["required"].([]any)
			out := map[string]any{}
			for _, r := range req {
				name, _ := r.(string)
				ps, has := props[name]
				if !has {
					return nil, false
				}
				v, ok := s.minimal(asObject(ps))
				if !ok {
					return nil, false
				}
				out[name] = v
			}
			return out, true
		case "array":
			n := intOf(schema["minItems"])
			items := asObject(schema["items"])
			out := make([]any, 0, n)
			for range n {
				v, ok := s.minimal(items)
				if !ok {
					return nil, false
				}
				out = append(out, v)
			}
			return out, true
		case "string":
			return strings.Repeat("x", intOf(schema["minLength"])), true
		case "integer", "number":
			if m, has := schema["minimum"].(float64); has {
				return m, true
			}
			return 0.0, true
		case "boolean":
			return false, true
		case "null":
			return nil, true
		}
	}
	return nil, false
}

// queryValue renders a parameter's minimal value for a URL.
func (s *spec) queryValue(p param) (string, bool) {
	v, ok := s.minimal(p.Schema)
	if !ok {
		return "", false
	}
	switch x := v.(type) {
	case string:
		return x, true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}

// asObject is v as a JSON object (nil when it is not one).
func asObject(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// intOf is a JSON number as an int (0 when absent).
func intOf(v any) int {
	f, _ := v.(float64)
	return int(f)
}
