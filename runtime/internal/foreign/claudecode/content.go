package claudecode

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// Limits of the payload rules (docs/format.md) the mapping keeps to.
const (
	maxMessageID = 256 // bytes of a message id
	maxCallID    = 128 // bytes of a call id
	// maxRawDepth bounds the nesting of a source block kept in a plugin
	// block: the block sits four levels deep in the event data, whose
	// nesting limit is 512.
	maxRawDepth = 500
)

// pluginBlock is the name of the plugin block that keeps a source block
// logbook has no block type for: {"type":"plugin:claude-code","block":…}.
const pluginBlock = "claude-code"

// hashed is s when it is 1 … limit bytes long, else prefix followed by the
// first 16 hex digits of the SHA-256 of s: an id that always fits.
func hashed(s, prefix string, limit int) string {
	if s != "" && len(s) <= limit {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return prefix + hex.EncodeToString(sum[:8])
}

// callID is the logbook call id of a tool_use id (a tool_result's
// tool_use_id maps the same way).
func callID(id string) string { return hashed(id, "call-h", maxCallID) }

// messageID is a message id made of base (a uuid or an API message id).
func messageID(base string) string { return hashed(base, "msg-h", maxMessageID) }

// keep is the plugin block holding the source block raw, or false when raw
// would break a JSON rule of logbook (it then stays in the raw record only).
func keep(raw json.RawMessage) (events.Block, bool) {
	if _, err := jsonv.Parse(raw, jsonv.Options{MaxDepth: maxRawDepth}); err != nil {
		return events.Block{}, false
	}
	members := make([]byte, 0, len(raw)+10)
	members = append(append(append(members, `{"block":`...), raw...), '}')
	return events.PluginBlock(pluginBlock, members), true
}

// image is the image block of a base64 image source, or a text block
// naming the image when its data is not inline base64.
func image(b apiBlock) (events.Block, bool) {
	if b.Source == nil {
		return keep(b.raw)
	}
	if b.Source.Type == "base64" && b.Source.MediaType != "" {
		data, err := base64.StdEncoding.DecodeString(b.Source.Data)
		if err == nil {
			return events.Image(b.Source.MediaType, data), true
		}
	}
	return keep(b.raw)
}

// userBlocks maps the blocks of a user message other than tool results:
// text and images as such, anything else kept in a plugin block.
func userBlocks(bs []apiBlock) []events.Block {
	out := make([]events.Block, 0, len(bs))
	for _, b := range bs {
		switch b.Type {
		case "tool_result":
			continue
		case "text":
			out = append(out, events.Text(b.Text))
			continue
		case "image":
			if bl, ok := image(b); ok {
				out = append(out, bl)
			}
			continue
		}
		if bl, ok := keep(b.raw); ok {
			out = append(out, bl)
		}
	}
	return out
}

// resultBlocks maps a tool_result's content: a string or text blocks as
// text, images as images, anything else kept in a plugin block.
func resultBlocks(content json.RawMessage) []events.Block {
	return userBlocks(blocks(content))
}

// usage reads an API usage, or nil when a count is missing, negative or
// not an integer.
func usage(u *apiUsage) *events.Usage {
	if u == nil {
		return nil
	}
	n := func(s json.Number, required bool) (int64, bool) {
		if s == "" {
			return 0, !required
		}
		v, err := strconv.ParseInt(string(s), 10, 64)
		return v, err == nil && v >= 0 && v <= 1<<53-1
	}
	in, ok1 := n(u.Input, true)
	out, ok2 := n(u.Output, true)
	cr, ok3 := n(u.CacheRead, false)
	cw, ok4 := n(u.CacheWrite, false)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return nil
	}
	return &events.Usage{Input: in, Output: out, CacheRead: cr, CacheWrite: cw}
}

// interruption reports whether user text is Claude Code's note that the
// user stopped the turn ("[Request interrupted by user]", "… for tool use]").
func interruption(bs []apiBlock) bool {
	return len(bs) == 1 && bs[0].Type == "text" && strings.HasPrefix(bs[0].Text, "[Request interrupted by user")
}
