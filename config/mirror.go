package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// DefaultMirrorIdleRelease is how long a mirrored session stays live after
// the mirror last wrote to it (key idle_release of a mirror block).
const DefaultMirrorIdleRelease = time.Minute

// minMirrorIdleRelease is the shortest idle_release of a mirror block.
const minMirrorIdleRelease = time.Second

// sourceDirs are the tools a mirror block (and logbook import --follow)
// knows, with each one's session directory relative to the home directory;
// "auto" has none.
var sourceDirs = map[string]string{
	"claude-code": filepath.Join(".claude", "projects"),
	"codex":       filepath.Join(".codex", "sessions"),
	"pi":          filepath.Join(".pi", "agent", "sessions"),
	"auto":        "",
}

// SourceTools returns the names a mirror block's label (and import's
// --from) takes: "auto", "claude-code", "codex", "pi", sorted.
func SourceTools() []string {
	names := make([]string, 0, len(sourceDirs))
	for n := range sourceDirs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// DefaultSourceDir returns where tool keeps its sessions under the home
// directory home: ~/.claude/projects for "claude-code", ~/.codex/sessions
// for "codex", ~/.pi/agent/sessions for "pi"; "" for "auto" and for a name
// that is not a tool.
func DefaultSourceDir(tool, home string) string {
	rel := sourceDirs[tool]
	if rel == "" {
		return ""
	}
	return filepath.Join(home, rel)
}

var mirrorSchema = schema{
	attrs: []string{"dir", "poll", "idle_release"},
}

func (d *decoder) mirrors(c *Config, blocks []*hclsyntax.Block) {
	seen := make(map[string]hcl.Range)
	for _, b := range blocks {
		if len(b.Labels) != 1 {
			d.errorf(b.TypeRange, `mirror block needs exactly one label, the tool: mirror "claude-code" { ... } (tools: %s)`, quoteAll(SourceTools()))
			continue
		}
		tool := b.Labels[0]
		if _, ok := sourceDirs[tool]; !ok {
			d.errorf(b.LabelRanges[0], "mirror %q: the label must be one of %s", tool, quoteAll(SourceTools()))
			continue
		}
		if at, dup := seen[tool]; dup {
			d.errorf(b.LabelRanges[0], "mirror %q is declared twice (first at %s)", tool, d.pos(at))
			continue
		}
		seen[tool] = b.TypeRange
		s := mirrorSchema
		s.where = `in mirror "` + tool + `"`
		attrs, _ := d.content(b.Body, s)
		m := Mirror{Tool: tool, IdleRelease: DefaultMirrorIdleRelease}
		d.boolean(attrs["poll"], &m.Poll)
		if a := attrs["idle_release"]; a != nil {
			d.duration(a, &m.IdleRelease, minMirrorIdleRelease, 0)
		}
		switch st := d.nonEmpty(attrs["dir"], &m.Dir, ""); {
		case st == set:
			if rest, ok := strings.CutPrefix(m.Dir, "~/"); ok || m.Dir == "~" {
				home, err := os.UserHomeDir()
				if err != nil {
					d.errorf(attrs["dir"].SrcRange, "dir = %q starts with ~ but there is no home directory (HOME is unset); give an absolute path", m.Dir)
					break
				}
				m.Dir = filepath.Join(home, rest)
			} else if !filepath.IsAbs(m.Dir) {
				m.Dir = filepath.Join(d.baseDir, m.Dir)
			}
			m.Dir = filepath.Clean(m.Dir)
		case st == unset && tool == "auto":
			d.errorf(b.TypeRange, `mirror "auto" needs dir: auto has no default directory`)
		case st == unset:
			home, err := os.UserHomeDir()
			if err != nil {
				d.errorf(b.TypeRange, `mirror %q has no dir and there is no home directory (HOME is unset) to find %s in; set dir`, tool, filepath.Join("~", sourceDirs[tool]))
				break
			}
			m.Dir = DefaultSourceDir(tool, home)
		}
		c.Mirrors = append(c.Mirrors, m)
	}
}
