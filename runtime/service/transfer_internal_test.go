package service

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"strconv"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/runtime/internal/transfer"
)

// Every status transfer declares maps to the service's status of the same
// name (`logbook verify --json` prints it): a status added to transfer
// without a mapping here fails this test rather than pass through
// verify unnamed.
func TestEveryTransferStatusHasAVerifyStatus(t *testing.T) {
	statuses := transferStatuses(t)
	if len(statuses) < 7 {
		t.Fatalf("found %d statuses in runtime/internal/transfer (%q); the parse missed some", len(statuses), statuses)
	}
	for _, st := range statuses {
		got, ok := verifyStatus(transfer.Status(st))
		if !ok || string(got) != st {
			t.Errorf("verifyStatus(%q) = %q, %v; want %q, true", st, got, ok, st)
		}
	}
}

// A status the service has no mapping for is reported as an error that
// names it, never as a status of its own.
func TestAnUnknownTransferStatusIsAnError(t *testing.T) {
	c := comparison(transfer.Comparison{Session: "s", Mirror: "m", Status: "sideways", Detail: "d"})
	if c.Status != VerifyError || c.Detail != `unknown comparison status "sideways": d` {
		t.Fatalf("comparison of an unknown status = %q, %q", c.Status, c.Detail)
	}
}

// transferStatuses returns the values of every constant of type Status
// that package transfer declares.
func transferStatuses(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, "../internal/transfer", func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.CONST {
					continue
				}
				for _, s := range g.Specs {
					vs := s.(*ast.ValueSpec)
					if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Status" {
						continue
					}
					for _, v := range vs.Values {
						lit, ok := v.(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING {
							t.Fatalf("%s: a Status constant that is not a string literal", fset.Position(v.Pos()))
						}
						s, err := strconv.Unquote(lit.Value)
						if err != nil {
							t.Fatal(err)
						}
						out = append(out, s)
					}
				}
			}
		}
	}
	return out
}
