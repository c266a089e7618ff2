package session

import (
	"strconv"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// message checks a message of the checker's event type (docs/format.md): role first,
// then the members, the source, the tool-call id pairing, then the blocks.
func (c *payloadChecker) message(msg jsonv.Value) *sdk.Error {
	mk := surfaceMsgOf(c.typ)
	if mk == nil {
		return c.badf(c.code, "%s carries no message", c.typ)
	}
	if msg.Kind() != jsonv.Object {
		return c.bad(c.code, msg, "must be a message object")
	}
	if role := msg.Get("role"); !role.StrEqual(mk.role) {
		c.in("role")
		if role.Kind() != jsonv.String {
			return c.bad(c.code, role, "must be a string")
		}
		return c.bad(sdk.CodeMessageRoleMismatch, role, "must be "+strconv.Quote(mk.role)+" in "+mk.typ)
	}
	if err := c.object(msg, mk.shape, false); err != nil {
		return err
	}
	if err := c.source(msg, mk); err != nil {
		return err
	}
	c.in("content")
	if err := c.blocks(msg.Get("content"), mk.blocks, mk.typ); err != nil {
		return err
	}
	c.out()
	return nil
}

// source checks message.source: the generic rule (object, non-empty string
// kind) with PAYLOAD_INVALID, the per-type rules of docs/format.md with
// MESSAGE_SOURCE_INVALID, and toolCallId == source.callId for tool messages.
func (c *payloadChecker) source(msg jsonv.Value, mk *surfaceMsg) *sdk.Error {
	src := msg.Get("source")
	c.in("source")
	kind := src.Get("kind")
	if kind.Kind() != jsonv.String || kind.StrEqual("") {
		c.in("kind")
		return c.bad(c.code, kind, "must be a non-empty string")
	}
	switch mk.role {
	case "system":
		if err := c.sourceKind(kind, "system-prompt"); err != nil {
			return err
		}
	case "assistant":
		if err := c.sourceKind(kind, "model"); err != nil {
			return err
		}
		if err := c.sourceString(src, "provider"); err != nil {
			return err
		}
		if err := c.sourceString(src, "model"); err != nil {
			return err
		}
	case "user":
		if !kind.StrEqual("compact-checkpoint") {
			break
		}
		if err := c.sourceString(src, "compactionId"); err != nil {
			return err
		}
		if v := src.Get("sourceCommandId"); v.Exists() && v.Kind() != jsonv.String {
			c.in("sourceCommandId")
			return c.bad(sdk.CodeMessageSourceInvalid, v, "must be a string")
		}
	case "tool":
		if err := c.sourceKind(kind, "tool"); err != nil {
			return err
		}
		if err := c.sourceString(src, "callId"); err != nil {
			return err
		}
		callID, toolCallID := src.Get("callId"), msg.Get("toolCallId")
		if !sameString(callID, toolCallID) {
			c.in("callId")
			cidPath := c.where()
			c.out()
			c.out()
			c.in("toolCallId")
			tid, _ := toolCallID.Str()
			cid, _ := callID.Str()
			return c.badf(sdk.CodeToolCallIDMismatch, "%q differs from %s = %q", tid, cidPath, cid)
		}
	}
	c.out()
	return nil
}

// sourceKind requires source.kind == want (MESSAGE_SOURCE_INVALID).
func (c *payloadChecker) sourceKind(kind jsonv.Value, want string) *sdk.Error {
	if kind.StrEqual(want) {
		return nil
	}
	c.in("kind")
	return c.bad(sdk.CodeMessageSourceInvalid, kind, "must be "+strconv.Quote(want)+" in "+c.typ)
}

// sourceString requires source.<name> to be a non-empty string
// (MESSAGE_SOURCE_INVALID).
func (c *payloadChecker) sourceString(src jsonv.Value, name string) *sdk.Error {
	v := src.Get(name)
	if v.Kind() == jsonv.String && !v.StrEqual("") {
		return nil
	}
	c.in(name)
	return c.bad(sdk.CodeMessageSourceInvalid, v, "must be a non-empty string")
}

// blocks checks a content array (docs/format.md) with the block kinds in allowed; where
// names the event type for details.
func (c *payloadChecker) blocks(content jsonv.Value, allowed blockSet, where string) *sdk.Error {
	if content.Kind() != jsonv.Array {
		return c.bad(c.code, content, "must be an array of blocks")
	}
	var ids stringSet
	for i, b := range content.Elements() {
		c.at(i)
		if b.Kind() != jsonv.Object {
			return c.bad(c.code, b, "must be a block object")
		}
		t := b.Get("type")
		kind, k := blockSet(0), -1
		for j := range blockKinds {
			if t.StrEqual(blockKinds[j].name) {
				kind, k = blockKinds[j].kind, j
				break
			}
		}
		if k < 0 {
			if !hasPluginPrefix(t, 1) {
				c.in("type")
				if t.Kind() != jsonv.String {
					return c.bad(c.code, t, "must be a string")
				}
				return c.bad(c.code, t, "unknown block type")
			}
			kind = bPlugin
		}
		if allowed&kind == 0 {
			c.in("type")
			if kind&(bToolAddition|bToolRemoval) != 0 {
				return c.bad(sdk.CodeToolChangeRole, t, "allowed only in developer/message, not in "+where)
			}
			return c.bad(c.code, t, "block type not allowed in "+where)
		}
		if kind == bPlugin {
			c.out()
			continue // opaque
		}
		if kind == bToolAddition && b.Get("tool").Exists() {
			c.in("tool")
			return c.badf(sdk.CodeToolAdditionInlineDefinition,
				"a tool-addition names a tool of the request header (headerSeq) and carries no definition")
		}
		if err := c.object(b, blockKinds[k].shape, false); err != nil {
			return err
		}
		switch kind {
		case bToolAddition, bToolRemoval:
			if b.Get("toolName").StrEqual("") {
				c.in("toolName")
				return c.badf(sdk.CodeToolChangeNameEmpty, `"": must be a non-empty tool name`)
			}
		case bToolCall:
			if id := b.Get("id"); ids.add(id) {
				c.in("id")
				s, _ := id.Str()
				return c.badf(c.code, "%q: duplicate tool-call id in the message", s)
			}
		}
		c.out()
	}
	return nil
}
