package billing

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// The package's index is the merchant's API: what only a Store's implementer needs is
// in package storekit, and the index names none of it.
func TestGodocIndexHoldsNoImplementerNames(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	files := []*ast.File{}
	for _, f := range pkgs["billing"].Files {
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/billingsdk/billing-go")
	if err != nil {
		t.Fatal(err)
	}
	index := map[string]bool{}
	for _, v := range append(p.Consts, p.Vars...) {
		for _, n := range v.Names {
			index[n] = true
		}
	}
	for _, f := range p.Funcs {
		index[f.Name] = true
	}
	for _, ty := range p.Types {
		index[ty.Name] = true
		for _, f := range ty.Funcs {
			index[f.Name] = true
		}
		for _, v := range append(ty.Consts, ty.Vars...) {
			for _, n := range v.Names {
				index[n] = true
			}
		}
	}
	if len(index) < 100 {
		t.Fatalf("the index holds %d names: the parse missed the package", len(index))
	}
	types := 0
	for _, ty := range p.Types {
		if ty.Decl.Tok == token.TYPE {
			types++
		}
	}
	t.Logf("the index holds %d types and %d names", types, len(index))
	for _, name := range []string{"MergeOutcome", "ValidateClaim", "ValidateOwner", "MaxClaim", "ErrLeaseLost",
		"CallbackEntryBeginner", "ReportLeaseRenewer",
		"Store", "Settlement", "CallbackClaim", "CallbackClaimed", "CallbackInFlight", "CallbackHandled", "Entry", "Movement",
		"MovementKey", "KeyOf", "EventKey", "Callback", "Contradiction", "MemoryStoreOptions", "NewMemoryStoreWithOptions", "ErrStoreFull"} {
		if index[name] {
			t.Errorf("billing's godoc index names %s, a store implementer's name: it belongs in package storekit", name)
		}
	}
}
