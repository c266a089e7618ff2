package config

import (
	"net/url"
	"time"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// The defaults and bounds of the telemetry block.
const (
	// DefaultTelemetryTimeout bounds one upload to the collector, retries
	// included: 10s.
	DefaultTelemetryTimeout = 10 * time.Second
	// DefaultTelemetryQueue is how many turns' spans wait for upload
	// before more are dropped: 1000.
	DefaultTelemetryQueue = 1000
)

var telemetrySchema = schema{
	where: "in telemetry",
	attrs: []string{"otlp_endpoint", "headers", "timeout", "queue"},
}

// Telemetry is the body of the telemetry block: where logbook serve pushes
// OpenTelemetry traces of the turns that end (docs/operations.md,
// "Telemetry").
type Telemetry struct {
	// OTLPEndpoint is the URL of an OTLP/HTTP collector, http or https.
	// Spans go to the URL as given when it has a path, else to
	// <endpoint>/v1/traces. Key otlp_endpoint, required.
	OTLPEndpoint string

	// Headers are sent with every upload (an API key, say). Key headers;
	// default none.
	Headers map[string]string

	// Timeout bounds one upload, the exporter's retries included. Key
	// timeout; default DefaultTelemetryTimeout; 100ms – 5m.
	Timeout time.Duration

	// Queue is how many turns' spans may wait for upload; past it a turn's
	// spans are dropped (counted and logged), never delaying an append.
	// Key queue; default DefaultTelemetryQueue; 1 – 1000000.
	Queue int64
}

func (d *decoder) telemetry(c *Config, blocks []*hclsyntax.Block) {
	if len(blocks) == 0 {
		return
	}
	for _, b := range blocks[1:] {
		d.errorf(b.TypeRange, "telemetry block is declared twice (first at %s)", d.pos(blocks[0].TypeRange))
	}
	b := blocks[0]
	d.noLabels(b)
	attrs, _ := d.content(b.Body, telemetrySchema)
	t := &Telemetry{Timeout: DefaultTelemetryTimeout, Queue: DefaultTelemetryQueue}
	d.duration(attrs["timeout"], &t.Timeout, 100*time.Millisecond, 5*time.Minute)
	d.intRange(attrs["queue"], &t.Queue, 1, 1000000, "1 and 1000000")
	if a := attrs["headers"]; a != nil {
		if v, st := d.eval(a); st == set {
			if !(v.Type().IsObjectType() || v.Type().IsMapType()) || v.IsNull() {
				d.typeErr(a, v, `a map of strings such as { "x-api-key" = "…" }`)
			} else {
				t.Headers = map[string]string{}
				for it := v.ElementIterator(); it.Next(); {
					k, e := it.Element()
					if e.IsNull() || e.Type() != cty.String {
						d.typeErr(a, v, `a map of strings such as { "x-api-key" = "…" }`)
						break
					}
					t.Headers[k.AsString()] = e.AsString()
				}
			}
		}
	}
	a := attrs["otlp_endpoint"]
	switch st := d.str(a, &t.OTLPEndpoint); {
	case st == unset:
		d.errorf(b.TypeRange, `telemetry block needs otlp_endpoint, such as otlp_endpoint = "http://127.0.0.1:4318"`)
	case st == set && !endpointURL(t.OTLPEndpoint):
		d.errorf(a.SrcRange, `otlp_endpoint = %q is not an http(s) URL such as "http://127.0.0.1:4318" (with a host; no user, query or fragment)`, t.OTLPEndpoint)
	}
	c.Telemetry = t
}

// endpointURL reports whether s is an http(s) URL with a host and no user,
// query or fragment.
func endpointURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil && u.RawQuery == "" && u.Fragment == "" && !u.ForceQuery
}
