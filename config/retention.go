package config

import (
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// minMaxAge is the shortest retention max_age: a typo such as "90s" for
// "90d" should not delete everything a minute old.
const minMaxAge = time.Hour

var retentionSchema = schema{
	where: "in retention",
	attrs: []string{"max_age", "keep_forked_parents"},
}

func (d *decoder) retention(c *Config, blocks []*hclsyntax.Block) {
	if len(blocks) == 0 {
		return
	}
	for _, b := range blocks[1:] {
		d.errorf(b.TypeRange, "retention block is declared twice (first at %s)", d.pos(blocks[0].TypeRange))
	}
	b := blocks[0]
	d.noLabels(b)
	attrs, _ := d.content(b.Body, retentionSchema)
	r := &Retention{KeepForkedParents: true}
	d.boolean(attrs["keep_forked_parents"], &r.KeepForkedParents)
	a := attrs["max_age"]
	v, st := d.eval(a)
	switch {
	case st == unset:
		d.errorf(b.TypeRange, `retention block needs max_age, such as max_age = "90d"`)
	case st == set && v.Type() != cty.String:
		d.typeErr(a, v, `a duration string such as "90d" or "36h"`)
	case st == set:
		age, err := ParseAge(v.AsString())
		switch {
		case err != nil:
			d.typeErr(a, v, `a duration such as "90d", "36h" or "1d12h" (units d, h, m, s, ms, us, ns)`)
		case age < minMaxAge:
			d.errorf(a.SrcRange, "%s = %s must be >= %s", a.Name, render(v), minMaxAge)
		default:
			r.MaxAge = age
		}
	}
	c.Retention = r
}

// ParseAge reads a duration as time.ParseDuration does, and also days:
// "90d", "1d12h", "2.5d" (a day is 24 hours). It refuses a negative one.
func ParseAge(s string) (time.Duration, error) {
	var days float64
	rest := s
	if i := strings.IndexByte(s, 'd'); i > 0 {
		n, err := strconv.ParseFloat(s[:i], 64)
		if err != nil || n < 0 || strings.ContainsAny(s[:i], "+-eEinfINFxXpP_") {
			return 0, &time.ParseError{Layout: "duration", Value: s}
		}
		days, rest = n, s[i+1:]
	}
	var t time.Duration
	if rest != "" || days == 0 {
		var err error
		if t, err = time.ParseDuration(rest); err != nil || t < 0 {
			return 0, &time.ParseError{Layout: "duration", Value: s}
		}
	}
	const maxDays = float64(1<<63-1) / float64(24*time.Hour)
	if days > maxDays-float64(t)/float64(24*time.Hour) {
		return 0, &time.ParseError{Layout: "duration", Value: s}
	}
	return time.Duration(days*float64(24*time.Hour)) + t, nil
}
