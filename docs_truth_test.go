package billing

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"strings"
	"testing"
)

// typeDoc returns the doc comment of the named type declared in the package's non-test
// files.
func typeDoc(t *testing.T, name string) string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range pkgs["billing"].Files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, spec := range g.Specs {
				if ts := spec.(*ast.TypeSpec); ts.Name.Name == name {
					return g.Doc.Text()
				}
			}
		}
	}
	t.Fatalf("no type %s", name)
	return ""
}

// Every method of the Tracker that takes a movement's params (and so tracks, then sends)
// is named where the Tracker's doc lists them, so that a method added later cannot be
// left out of the list.
func TestTrackerDocNamesEveryMethodThatTracksThenSends(t *testing.T) {
	doc := strings.Join(strings.Fields(typeDoc(t, "Tracker")), " ")
	start := strings.Index(doc, "Record each movement before sending it")
	if start < 0 {
		t.Fatal("the Tracker's doc no longer says how to record a movement before sending it")
	}
	list := doc[start:]
	list = list[:strings.Index(list, ")")]
	tr := reflect.TypeOf(&Tracker{})
	found := 0
	for i := range tr.NumMethod() {
		m := tr.Method(i)
		if m.Type.NumIn() != 3 {
			continue
		}
		p := m.Type.In(2)
		if p.Kind() != reflect.Pointer || !strings.HasSuffix(p.Elem().Name(), "Params") {
			continue
		}
		found++
		if !strings.Contains(list, m.Name) {
			t.Errorf("Tracker.%s(ctx, *%s) tracks, then sends, but the Tracker's doc does not list it: %q", m.Name, p.Elem().Name(), list)
		}
	}
	if found < 6 {
		t.Fatalf("found %d methods taking params: the reflection missed them", found)
	}
}

// Where Await and OnOutcome are documented, and in the README, the order between them is
// said: Await may return before OnOutcome has run or committed.
func TestAwaitAndOnOutcomeOrderIsDocumented(t *testing.T) {
	src, err := os.ReadFile("tracker.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	flat := func(b []byte) string {
		return strings.Join(strings.Fields(strings.ReplaceAll(string(b), "//", "")), " ")
	}
	for _, c := range []struct{ where, text, says string }{
		{"Await's doc", flat(src), "possibly before OnOutcome has been called for it or has committed"},
		{"OnOutcome's doc", flat(src), "Await may return an outcome before OnOutcome has run or committed"},
		{"the README", flat(readme), "may be before `OnOutcome` has run or committed"},
		{"the README's several instances", flat(readme), "OnOutcome: store.OnOutcomeTx(fulfil)"},
	} {
		if !strings.Contains(c.text, c.says) {
			t.Errorf("%s no longer says %q", c.where, c.says)
		}
	}
}
