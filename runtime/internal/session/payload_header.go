package session

import (
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// headerSeqBinding checks the docs/format.md rule of developer/message: headerSeq
// present ⇔ at least one tool-addition block. The shape is already valid.
func (c *payloadChecker) headerSeqBinding(data jsonv.Value) *sdk.Error {
	content := data.Get("message").Get("content")
	additions, first := 0, -1
	for i, b := range content.Elements() {
		if b.Get("type").StrEqual("tool-addition") {
			if additions == 0 {
				first = i
			}
			additions++
		}
	}
	hs := data.Get("headerSeq")
	switch {
	case hs.Exists() && additions == 0:
		c.in("headerSeq")
		return c.bad(sdk.CodeDeveloperHeaderSeqMismatch, hs,
			"present but the message has no tool-addition block (removal-only messages carry no headerSeq)")
	case !hs.Exists() && additions > 0:
		c.in("headerSeq")
		name, _ := content.Index(first).Get("toolName").Str()
		return c.badf(sdk.CodeDeveloperHeaderSeqMismatch,
			"missing but the message has %d tool-addition block(s) (first %q at content[%d])", additions, name, first)
	}
	return nil
}

// errorNeedsIsError checks the docs/format.md rule of tool/result: error present ⇒
// message.isError == true. The shape is already valid.
func (c *payloadChecker) errorNeedsIsError(data jsonv.Value) *sdk.Error {
	if !data.Get("error").Exists() {
		return nil
	}
	ie := data.Get("message").Get("isError")
	if b, ok := ie.Bool(); ok && b {
		return nil
	}
	c.in("message")
	c.in("isError")
	if !ie.Exists() {
		return c.badf(sdk.CodeToolResultErrorWithoutIserror, "missing but data.error is present; must be true")
	}
	return c.bad(sdk.CodeToolResultErrorWithoutIserror, ie, "must be true when data.error is present")
}

// header validates request/header data in the precedence of docs/format.md: the
// header rules first (system, empty tools, empty adapterDefaults, shapes of
// config, adapterDefaults, tools and startsSeries, reason), then the closed
// member rule of data and header.
func (c *payloadChecker) header(data jsonv.Value, headerSeen bool) *sdk.Error {
	if data.Kind() != jsonv.Object {
		return c.bad(c.code, data, "must be an object")
	}
	h := data.Get("header")
	c.in("header")
	if h.Kind() != jsonv.Object {
		return c.bad(c.code, h, "must be an EpochHeader object")
	}
	if sys := h.Get("system"); sys.Exists() {
		c.in("system")
		return c.badf(sdk.CodeHeaderSystemForbidden, "forbidden; the system prompt is a system/message")
	}
	tools := h.Get("tools")
	if tools.Kind() == jsonv.Array && tools.Len() == 0 {
		c.in("tools")
		return c.badf(sdk.CodeHeaderEmptyTools, "[]: omit tools instead of sending an empty list")
	}
	ad := h.Get("adapterDefaults")
	if ad.Kind() == jsonv.Object && ad.Len() == 0 {
		c.in("adapterDefaults")
		return c.badf(sdk.CodeHeaderEmptyAdapterDefaults, "{}: omit adapterDefaults instead of sending an empty object")
	}

	c.code = sdk.CodeHeaderInvalid
	config := h.Get("config")
	c.in("config")
	if err := c.object(config, shapeConfig, true); err != nil {
		return err
	}
	c.out()
	if ad.Exists() {
		c.in("adapterDefaults")
		if ad.Kind() != jsonv.Object {
			return c.bad(c.code, ad, "must be an object")
		}
		for key, v := range ad.Members() {
			name := "reasoningEffort"
			if !key.StrEqual(name) {
				name = "maxTokens"
			}
			if !key.StrEqual(name) {
				s, _ := key.Str()
				c.in(s)
				return c.badf(c.code, "unknown member (allowed: reasoningEffort, maxTokens)")
			}
			if b, ok := v.Bool(); !ok || !b {
				c.in(name)
				return c.bad(c.code, v, "must be true")
			}
			if !config.Get(name).Exists() {
				c.in(name)
				return c.badf(c.code, "marks data.header.config.%s, which is absent", name)
			}
		}
		c.out()
	}
	if tools.Exists() {
		c.in("tools")
		if tools.Kind() != jsonv.Array {
			return c.bad(c.code, tools, "must be an array of ToolSchema")
		}
		var names stringSet
		for i, t := range tools.Elements() {
			c.at(i)
			if err := c.object(t, shapeToolSchema, true); err != nil {
				return err
			}
			if name := t.Get("name"); names.add(name) {
				c.in("name")
				s, _ := name.Str()
				return c.badf(c.code, "%q: duplicate tool name", s)
			}
			c.out()
		}
		c.out()
	}
	c.out() // header
	if ss := data.Get("startsSeries"); ss.Exists() {
		if b, ok := ss.Bool(); !ok || !b {
			c.in("startsSeries")
			return c.bad(c.code, ss, "must be true when present")
		}
	}

	reason := data.Get("reason")
	initial := reason.StrEqual("initial")
	if !initial && !reason.StrEqual("resume") && !reason.StrEqual("change") && !reason.StrEqual("series") {
		c.in("reason")
		return c.bad(sdk.CodeHeaderReasonInvalid, reason, `must be "initial", "resume", "change" or "series"`)
	}
	if initial && headerSeen {
		c.in("reason")
		return c.bad(sdk.CodeHeaderReasonInvalid, reason, "the log already has a request/header")
	}
	if !initial && !headerSeen {
		c.in("reason")
		return c.bad(sdk.CodeHeaderReasonInvalid, reason, `the first request/header of a log must have reason "initial"`)
	}

	c.code = sdk.CodePayloadInvalid
	if err := c.object(data, shapeHeaderData, false); err != nil {
		return err
	}
	c.in("header")
	return c.object(h, shapeHeader, false)
}
