package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// opaque converts a body the config package does not interpret (a plugin's
// config block, a third-party backend's persistence block) to a JSON
// object, as the package doc describes.
func (d *decoder) opaque(b *hclsyntax.Body) (json.RawMessage, bool) {
	obj, ok := d.opaqueObject(b)
	if !ok {
		return nil, false
	}
	return mustJSON(obj), true
}

func (d *decoder) opaqueObject(b *hclsyntax.Body) (map[string]any, bool) {
	ok := true
	out := make(map[string]any)
	for _, a := range sortedAttrs(b) {
		v, st := d.eval(a)
		switch st {
		case bad:
			ok = false
			continue
		case unset:
			out[a.Name] = nil
			continue
		}
		j, err := ctyToJSON(v)
		if err != nil {
			d.errorf(a.SrcRange, "%s = %s cannot be passed to the plugin as JSON: %v", a.Name, render(v), err)
			ok = false
			continue
		}
		out[a.Name] = j
	}

	// Group nested blocks by type, in order of first appearance.
	var types []string
	groups := make(map[string][]*hclsyntax.Block)
	for _, blk := range b.Blocks {
		if _, seen := groups[blk.Type]; !seen {
			types = append(types, blk.Type)
		}
		groups[blk.Type] = append(groups[blk.Type], blk)
	}
	for _, t := range types {
		g := groups[t]
		if a := b.Attributes[t]; a != nil {
			d.errorf(g[0].TypeRange, "%s is used both as a key (at %s) and as a block; a plugin config needs one or the other", t, d.pos(a.SrcRange))
			ok = false
			continue
		}
		n := len(g[0].Labels)
		mixed := false
		for _, blk := range g[1:] {
			if len(blk.Labels) != n {
				d.errorf(blk.TypeRange, "%s blocks must all have the same number of labels (%d at %s, %d here)", t, n, d.pos(g[0].TypeRange), len(blk.Labels))
				mixed = true
			}
		}
		if mixed {
			ok = false
			continue
		}
		if n == 0 {
			var objs []any
			for _, blk := range g {
				obj, good := d.opaqueObject(blk.Body)
				ok = ok && good
				objs = append(objs, obj)
			}
			if len(objs) == 1 {
				out[t] = objs[0]
			} else {
				out[t] = objs
			}
			continue
		}
		root := make(map[string]any)
		seen := make(map[string]hcl.Range)
		for _, blk := range g {
			key := strings.Join(blk.Labels, "\x00")
			if at, dup := seen[key]; dup {
				d.errorf(blk.TypeRange, "%s %s is declared twice (first at %s)", t, quoteAll(blk.Labels), d.pos(at))
				ok = false
				continue
			}
			seen[key] = blk.TypeRange
			obj, good := d.opaqueObject(blk.Body)
			ok = ok && good
			m := root
			for _, l := range blk.Labels[:n-1] {
				next, _ := m[l].(map[string]any)
				if next == nil {
					next = make(map[string]any)
					m[l] = next
				}
				m = next
			}
			m[blk.Labels[n-1]] = obj
		}
		out[t] = root
	}
	return out, ok
}

// ctyToJSON converts an evaluated HCL value to a value encoding/json writes:
// strings, json.Number, bools, nil, []any and map[string]any.
func ctyToJSON(v cty.Value) (any, error) {
	if v.IsNull() {
		return nil, nil
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		return v.AsString(), nil
	case ty == cty.Number:
		bf := v.AsBigFloat()
		if bf.IsInf() {
			return nil, fmt.Errorf("JSON has no infinite numbers")
		}
		return json.Number(numberText(bf)), nil
	case ty == cty.Bool:
		return v.True(), nil
	case ty.IsListType() || ty.IsTupleType() || ty.IsSetType():
		out := []any{}
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			j, err := ctyToJSON(e)
			if err != nil {
				return nil, err
			}
			out = append(out, j)
		}
		return out, nil
	case ty.IsMapType() || ty.IsObjectType():
		out := make(map[string]any)
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			j, err := ctyToJSON(e)
			if err != nil {
				return nil, err
			}
			out[k.AsString()] = j
		}
		return out, nil
	}
	return nil, fmt.Errorf("values of type %s have no JSON form", ty.FriendlyName())
}

// mustJSON encodes a value built from ctyToJSON's types (or plain strings,
// ints and bools), which cannot fail; object keys come out sorted.
func mustJSON(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("config: encoding plugin config: " + err.Error())
	}
	return json.RawMessage(bytes.TrimRight(buf.Bytes(), "\n"))
}
