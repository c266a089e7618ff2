package config

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"

	"github.com/seed-e5e476df/logbook/sdk"
)

// Limits of docs/operations.md.
const (
	minWriteWindow   = time.Millisecond
	maxWriteWindow   = 60 * time.Second
	maxBusyTimeoutMS = math.MaxInt32
)

var (
	pluginNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
	sha256RE     = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// envFunc is env(name): the environment variable's value, "" when unset.
var envFunc = function.New(&function.Spec{
	Description: `Returns the value of the environment variable name, or "" when it is unset.`,
	Params:      []function.Parameter{{Name: "name", Type: cty.String}},
	Type:        function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		return cty.StringVal(os.Getenv(args[0].AsString())), nil
	},
})

// problem is one CONFIG_INVALID finding at a source position.
type problem struct {
	rng hcl.Range
	msg string
}

// decoder walks the parsed body, filling a Config and collecting problems.
// It walks hclsyntax bodies directly (rather than through hcl.BodySchema)
// so that unknown keys, block/attribute confusion and opaque plugin bodies
// all produce the same file:line:col messages.
type decoder struct {
	filename string
	baseDir  string // directory of filename: base of data_dir and relative commands
	dataDir  string // Overrides.DataDir: replaces data_dir when set
	ctx      *hcl.EvalContext
	problems []problem
}

func parse(src []byte, filename string, o Overrides) (*Config, error) {
	d := &decoder{
		filename: filename,
		baseDir:  filepath.Dir(filename),
		dataDir:  o.DataDir,
		ctx:      &hcl.EvalContext{Functions: map[string]function.Function{"env": envFunc}},
	}
	file, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		d.diags("syntax error", diags)
		return nil, d.err()
	}
	body, ok := file.Body.(*hclsyntax.Body)
	if !ok { // hclsyntax always returns its own body type
		panic(fmt.Sprintf("config: unexpected HCL body type %T", file.Body))
	}
	c := d.top(body)
	if len(d.problems) > 0 {
		return nil, d.err()
	}
	return c, nil
}

// err renders the problems in source order: one *sdk.Error, or errors.Join
// of several.
func (d *decoder) err() error {
	slices.SortStableFunc(d.problems, func(a, b problem) int {
		return cmp.Compare(a.rng.Start.Byte, b.rng.Start.Byte)
	})
	errs := make([]error, 0, len(d.problems))
	for _, p := range d.problems {
		errs = append(errs, sdk.Errorf(sdk.CodeConfigInvalid, "config", "%s: %s", d.pos(p.rng), p.msg))
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

func (d *decoder) pos(r hcl.Range) string {
	name := r.Filename
	if name == "" {
		name = d.filename
	}
	line, col := r.Start.Line, r.Start.Column
	if line == 0 {
		line, col = 1, 1
	}
	return fmt.Sprintf("%s:%d:%d", name, line, col)
}

func (d *decoder) errorf(r hcl.Range, format string, args ...any) {
	d.problems = append(d.problems, problem{rng: r, msg: fmt.Sprintf(format, args...)})
}

// diags records HCL's own error diagnostics, prefixed with what was being
// done (a key name, or "syntax error").
func (d *decoder) diags(prefix string, ds hcl.Diagnostics) {
	for _, dg := range ds {
		if dg.Severity != hcl.DiagError {
			continue
		}
		var r hcl.Range
		if dg.Subject != nil {
			r = *dg.Subject
		}
		msg := prefix + ": " + dg.Summary
		if dg.Detail != "" {
			msg += ": " + dg.Detail
		}
		d.problems = append(d.problems, problem{rng: r, msg: msg})
	}
}

// schema is what one block kind accepts.
type schema struct {
	where  string // "at top level", `in persistence "jsonl"`, …
	attrs  []string
	blocks []string
}

func (s schema) allowed() string {
	var parts []string
	if len(s.attrs) > 0 {
		parts = append(parts, "allowed keys: "+strings.Join(s.attrs, ", "))
	} else {
		parts = append(parts, "no keys are allowed here")
	}
	if len(s.blocks) > 0 {
		parts = append(parts, "allowed blocks: "+strings.Join(s.blocks, ", "))
	}
	return strings.Join(parts, "; ")
}

// content checks b against s: unknown keys and block types are reported;
// the known ones are returned.
func (d *decoder) content(b *hclsyntax.Body, s schema) (map[string]*hclsyntax.Attribute, []*hclsyntax.Block) {
	attrs := make(map[string]*hclsyntax.Attribute)
	for _, a := range sortedAttrs(b) {
		switch {
		case slices.Contains(s.attrs, a.Name):
			attrs[a.Name] = a
		case slices.Contains(s.blocks, a.Name):
			d.errorf(a.NameRange, "%s is a block %s, not a key: write %s { ... }", a.Name, s.where, a.Name)
		default:
			d.errorf(a.NameRange, "unknown key %q %s; %s", a.Name, s.where, s.allowed())
		}
	}
	var blocks []*hclsyntax.Block
	for _, blk := range b.Blocks {
		switch {
		case slices.Contains(s.blocks, blk.Type):
			blocks = append(blocks, blk)
		case slices.Contains(s.attrs, blk.Type):
			d.errorf(blk.TypeRange, "%s is a key %s, not a block: write %s = ...", blk.Type, s.where, blk.Type)
		default:
			d.errorf(blk.TypeRange, "unknown block %q %s; %s", blk.Type, s.where, s.allowed())
		}
	}
	return attrs, blocks
}

func sortedAttrs(b *hclsyntax.Body) []*hclsyntax.Attribute {
	out := make([]*hclsyntax.Attribute, 0, len(b.Attributes))
	for _, a := range b.Attributes {
		out = append(out, a)
	}
	slices.SortFunc(out, func(x, y *hclsyntax.Attribute) int {
		return cmp.Compare(x.SrcRange.Start.Byte, y.SrcRange.Start.Byte)
	})
	return out
}

// first returns the range of the first of keys the body sets, else fallback.
func first(attrs map[string]*hclsyntax.Attribute, fallback hcl.Range, keys ...string) hcl.Range {
	for _, k := range keys {
		if a := attrs[k]; a != nil {
			return a.SrcRange
		}
	}
	return fallback
}

// status says what a getter found.
type status int

const (
	unset status = iota // absent or null: the default stays
	set                 // a valid value was stored
	bad                 // a problem was recorded
)

// eval evaluates a's expression.
func (d *decoder) eval(a *hclsyntax.Attribute) (cty.Value, status) {
	if a == nil {
		return cty.NilVal, unset
	}
	v, ds := a.Expr.Value(d.ctx)
	if ds.HasErrors() {
		d.diags(a.Name, ds)
		return cty.NilVal, bad
	}
	if !v.IsWhollyKnown() {
		d.errorf(a.SrcRange, "%s has no known value", a.Name)
		return cty.NilVal, bad
	}
	if v.IsNull() {
		return v, unset
	}
	return v, set
}

func (d *decoder) typeErr(a *hclsyntax.Attribute, v cty.Value, want string) status {
	d.errorf(a.SrcRange, "%s = %s must be %s", a.Name, render(v), want)
	return bad
}

func (d *decoder) str(a *hclsyntax.Attribute, dst *string) status {
	v, st := d.eval(a)
	if st != set {
		return st
	}
	if v.Type() != cty.String {
		return d.typeErr(a, v, "a string")
	}
	*dst = v.AsString()
	return set
}

// nonEmpty is str that also refuses "".
func (d *decoder) nonEmpty(a *hclsyntax.Attribute, dst *string, hint string) status {
	var s string
	st := d.str(a, &s)
	if st != set {
		return st
	}
	if s == "" {
		d.errorf(a.SrcRange, `%s = "" must not be empty%s`, a.Name, hint)
		return bad
	}
	*dst = s
	return set
}

func (d *decoder) enum(a *hclsyntax.Attribute, dst *string, allowed ...string) status {
	var s string
	st := d.str(a, &s)
	if st != set {
		return st
	}
	if !slices.Contains(allowed, s) {
		d.errorf(a.SrcRange, "%s = %q must be one of %s", a.Name, s, quoteAll(allowed))
		return bad
	}
	*dst = s
	return set
}

func (d *decoder) boolean(a *hclsyntax.Attribute, dst *bool) status {
	v, st := d.eval(a)
	if st != set {
		return st
	}
	if v.Type() != cty.Bool {
		return d.typeErr(a, v, "true or false")
	}
	*dst = v.True()
	return set
}

func (d *decoder) integer(a *hclsyntax.Attribute, dst *int64) status {
	v, st := d.eval(a)
	if st != set {
		return st
	}
	if v.Type() != cty.Number {
		return d.typeErr(a, v, "a whole number")
	}
	bf := v.AsBigFloat()
	if !bf.IsInt() {
		return d.typeErr(a, v, "a whole number")
	}
	i, acc := bf.Int64()
	if acc != big.Exact {
		return d.typeErr(a, v, "a whole number within the int64 range")
	}
	*dst = i
	return set
}

// intMin is integer with a lower bound.
func (d *decoder) intMin(a *hclsyntax.Attribute, dst *int64, lo int64) status {
	var i int64
	st := d.integer(a, &i)
	if st != set {
		return st
	}
	if i < lo {
		d.errorf(a.SrcRange, "%s = %d must be >= %d", a.Name, i, lo)
		return bad
	}
	*dst = i
	return set
}

// intRange is integer within [lo, hi].
func (d *decoder) intRange(a *hclsyntax.Attribute, dst *int64, lo, hi int64, what string) status {
	var i int64
	st := d.integer(a, &i)
	if st != set {
		return st
	}
	if i < lo || i > hi {
		d.errorf(a.SrcRange, "%s = %d must be between %s", a.Name, i, what)
		return bad
	}
	*dst = i
	return set
}

// ratio is a number in (0, 1].
func (d *decoder) ratio(a *hclsyntax.Attribute, dst *float64) status {
	v, st := d.eval(a)
	if st != set {
		return st
	}
	if v.Type() != cty.Number {
		return d.typeErr(a, v, "a number in (0, 1]")
	}
	f, _ := v.AsBigFloat().Float64()
	if !(f > 0 && f <= 1) {
		d.errorf(a.SrcRange, "%s = %s must be in (0, 1]", a.Name, render(v))
		return bad
	}
	*dst = f
	return set
}

// duration reads a duration string within [lo, hi] (hi 0: no upper bound;
// lo > 0 is then the only rule).
func (d *decoder) duration(a *hclsyntax.Attribute, dst *time.Duration, lo, hi time.Duration) status {
	v, st := d.eval(a)
	if st != set {
		return st
	}
	if v.Type() != cty.String {
		return d.typeErr(a, v, `a duration string such as "200ms" or "5s"`)
	}
	t, err := time.ParseDuration(v.AsString())
	if err != nil {
		return d.typeErr(a, v, `a duration such as "200ms" or "5s" (units ns, us, ms, s, m, h)`)
	}
	switch {
	case hi > 0 && (t < lo || t > hi):
		d.errorf(a.SrcRange, "%s = %s must be between %s and %s", a.Name, render(v), lo, hi)
		return bad
	case hi == 0 && lo <= time.Nanosecond && t < lo:
		d.errorf(a.SrcRange, "%s = %s must be > 0", a.Name, render(v))
		return bad
	case hi == 0 && t < lo:
		d.errorf(a.SrcRange, "%s = %s must be >= %s", a.Name, render(v), lo)
		return bad
	}
	*dst = t
	return set
}

// strings reads a list of non-empty strings.
func (d *decoder) strings(a *hclsyntax.Attribute, dst *[]string) status {
	v, st := d.eval(a)
	if st != set {
		return st
	}
	ty := v.Type()
	if !ty.IsListType() && !ty.IsTupleType() && !ty.IsSetType() {
		return d.typeErr(a, v, "a list of strings")
	}
	out := []string{}
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		if e.IsNull() || e.Type() != cty.String {
			return d.typeErr(a, v, "a list of strings")
		}
		if e.AsString() == "" {
			d.errorf(a.SrcRange, "%s = %s must not contain empty strings", a.Name, render(v))
			return bad
		}
		out = append(out, e.AsString())
	}
	*dst = out
	return set
}

// render shows a value in HCL-like syntax for messages, shortened.
func render(v cty.Value) string {
	s := renderFull(v)
	if r := []rune(s); len(r) > 80 {
		s = string(r[:77]) + "..."
	}
	return s
}

func renderFull(v cty.Value) string {
	switch {
	case v.IsNull():
		return "null"
	case !v.IsKnown():
		return "(unknown)"
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		return strconv.Quote(v.AsString())
	case ty == cty.Number:
		return numberText(v.AsBigFloat())
	case ty == cty.Bool:
		return strconv.FormatBool(v.True())
	case ty.IsListType() || ty.IsTupleType() || ty.IsSetType():
		var parts []string
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			parts = append(parts, renderFull(e))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case ty.IsMapType() || ty.IsObjectType():
		var parts []string
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			parts = append(parts, k.AsString()+" = "+renderFull(e))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return ty.FriendlyName()
}

// numberText renders an integer below 2^64 in magnitude exactly, in plain
// digits (so plugins can decode it into an integer), and any other number in
// the shortest form that reads back the same ("0.1", "1e+300").
func numberText(bf *big.Float) string {
	if bf.IsInt() && bf.MantExp(nil) <= 64 {
		return bf.Text('f', 0)
	}
	return bf.Text('g', -1)
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

func bundledNames() string {
	names := make([]string, len(bundled))
	for i, b := range bundled {
		names[i] = b.Name
	}
	return strings.Join(names, ", ")
}
