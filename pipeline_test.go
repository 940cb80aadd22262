package billing

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// pipelineSteps are the inbound pipeline's steps (DESIGN "One gate per boundary"), each
// a function in the file named for it.
var pipelineSteps = []struct{ step, function, file string }{
	{"gate", "receiveBody", "inbound.go"},
	{"gate", "readInbound", "inbound.go"},
	{"shape", "readEvent", "events.go"},
	{"confirm", "webhookHandler.confirm", "confirm.go"},
	{"confirm", "Tracker.confirmDelivered", "confirm.go"},
	{"dedupe", "webhookHandler.seenClaim", "dedupe.go"},
	{"dedupe", "webhookHandler.dedupe", "dedupe.go"},
	{"settle", "Tracker.settleConfirmed", "settle.go"},
	{"hand out", "webhookHandler.handOut", "handout.go"},
	{"hand out", "settlesNothing", "handout.go"},
}

// callGraph is the package's static call graph: the calls of its own functions that the
// type checker resolves (calls through interfaces and function values are not followed).
type callGraph struct {
	fset    *token.FileSet
	pkg     *types.Package
	info    *types.Info
	decls   map[*types.Func]*ast.FuncDecl
	byName  map[string]*types.Func
	callees map[*types.Func][]*types.Func
}

func loadCallGraph(t *testing.T) *callGraph {
	t.Helper()
	g := &callGraph{fset: token.NewFileSet(), decls: map[*types.Func]*ast.FuncDecl{}, byName: map[string]*types.Func{},
		callees: map[*types.Func][]*types.Func{}}
	names, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(g.fset, name, nil, 0)
		require.NoError(t, err)
		files = append(files, f)
	}
	g.info = &types.Info{Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	g.pkg, err = (&types.Config{Importer: importer.ForCompiler(g.fset, "source", nil)}).Check("billing", g.fset, files, g.info)
	require.NoError(t, err)
	for _, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				fn := g.info.Defs[fd.Name].(*types.Func)
				g.decls[fn] = fd
				g.byName[funcName(fn)] = fn
			}
		}
	}
	return g
}

// funcName is Name, or Recv.Name for a method.
func funcName(fn *types.Func) string {
	sig := fn.Type().(*types.Signature)
	if sig.Recv() == nil {
		return fn.Name()
	}
	t := sig.Recv().Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	return t.(*types.Named).Obj().Name() + "." + fn.Name()
}

func (g *callGraph) file(fn *types.Func) string {
	return filepath.Base(g.fset.Position(fn.Pos()).Filename)
}

// calls returns the functions of the package fn calls, in the order written.
func (g *callGraph) calls(fn *types.Func) []*types.Func {
	if out, ok := g.callees[fn]; ok {
		return out
	}
	var out []*types.Func
	if fd := g.decls[fn]; fd != nil && fd.Body != nil {
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var obj types.Object
			switch f := ast.Unparen(call.Fun).(type) {
			case *ast.Ident:
				obj = g.info.Uses[f]
			case *ast.SelectorExpr:
				if sel, ok := g.info.Selections[f]; ok {
					if types.IsInterface(sel.Recv()) {
						return true
					}
					obj = sel.Obj()
				} else {
					obj = g.info.Uses[f.Sel]
				}
			case *ast.IndexExpr:
				if id, ok := f.X.(*ast.Ident); ok {
					obj = g.info.Uses[id]
				}
			}
			if callee, ok := obj.(*types.Func); ok && callee.Pkg() == g.pkg && !slices.Contains(out, callee.Origin()) {
				out = append(out, callee.Origin())
			}
			return true
		})
	}
	g.callees[fn] = out
	return out
}

// boundary reports whether fn is another boundary's gate, whose file the path enters but
// does not follow: the status check (a call of the Client), the store (storeGate), and
// the scrubber and the logs.
func (g *callGraph) boundary(fn *types.Func) bool {
	switch g.file(fn) {
	case "log.go", "scrub.go", "observe.go":
		return true
	}
	switch name := funcName(fn); {
	case name == "movementStatus", name == "checkoutRecord":
		return true
	case strings.HasPrefix(name, "Client."), strings.HasPrefix(name, "storeGate."), strings.Contains(name, "Service."):
		return true
	}
	return false
}

// pathFigures are what a reader following a call path meets.
type pathFigures struct {
	entered, reentered []string
	callsBack          []string // caller -> callee edges into a caller's file
}

// follow walks every call path from entry, depth first in the order written.
func (g *callGraph) follow(entry *types.Func) pathFigures {
	entered, reentered := map[string]bool{}, map[string]bool{}
	var back []string
	onPath := map[*types.Func]bool{}
	var walk func(fn *types.Func, callers []string)
	walk = func(fn *types.Func, callers []string) {
		file := g.file(fn)
		entered[file] = true
		if onPath[fn] || g.boundary(fn) {
			return
		}
		onPath[fn] = true
		defer delete(onPath, fn)
		for _, callee := range g.calls(fn) {
			cf := g.file(callee)
			if cf != file {
				if slices.Contains(callers, cf) {
					edge := funcName(fn) + " -> " + funcName(callee)
					if !slices.Contains(back, edge) {
						back = append(back, edge)
					}
				}
				if entered[cf] {
					reentered[cf] = true
				}
			}
			walk(callee, append(callers, file))
		}
	}
	walk(entry, nil)
	keys := func(m map[string]bool) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	return pathFigures{entered: keys(entered), reentered: keys(reentered), callsBack: back}
}

// TestInboundPipelineReadsInOrder: Tracker.Deliver and the handler's ServeHTTP are the
// pipeline's steps, each a function in the file named for it, and no function on their
// paths calls back into the file of one of its callers. The files a reader enters
// following each are logged.
func TestInboundPipelineReadsInOrder(t *testing.T) {
	g := loadCallGraph(t)
	for _, s := range pipelineSteps {
		fn, ok := g.byName[s.function]
		require.True(t, ok, "the %s step %s is gone", s.step, s.function)
		require.Equal(t, s.file, g.file(fn), "the %s step %s", s.step, s.function)
	}
	for _, entry := range []string{"Tracker.Deliver", "webhookHandler.ServeHTTP"} {
		fn, ok := g.byName[entry]
		require.True(t, ok, entry)
		f := g.follow(fn)
		require.Empty(t, f.callsBack, "%s: a step calls back into a caller's file", entry)
		t.Logf("%s enters %d files %v, re-enters %d of them %v", entry, len(f.entered), f.entered, len(f.reentered), f.reentered)
	}
}
