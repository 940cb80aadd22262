package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// browserModules are the modules the browser tests need and a merchant's module must
// never download because of the SDK.
var browserModules = []string{"chromedp", "cdproto", "gobwas", "go-json-experiment"}

// repoRoot is the SDK's module, one directory above this one.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(root, "go.mod"))
	return root
}

// newModule writes a module named name in a fresh directory that requires the SDK from
// root. Its go.sum starts as the SDK's own, so the go command finds every checksum it
// needs without the network; go mod tidy then keeps only the lines this module needs.
func newModule(t *testing.T, root, name string) string {
	t.Helper()
	dir := t.TempDir()
	goMod := "module " + name + "\n\ngo 1.24\n\n" +
		"require github.com/billingsdk/billing-go v0.1.0\n\n" +
		"replace github.com/billingsdk/billing-go => " + root + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(goMod), 0o644))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))
	return dir
}

// goIn runs the go command in dir. GOFLAGS=-mod=mod lets it update go.mod, GOWORK=off
// keeps a workspace of the caller's out, and GOPROXY comes from the environment, so the
// check runs offline once the module cache holds the SDK's dependencies.
func goIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go %s in %s:\n%s", strings.Join(args, " "), dir, out)
}

// sumModules returns the module paths named in dir's go.sum.
func sumModules(t *testing.T, dir string) []string {
	t.Helper()
	sum, err := os.ReadFile(filepath.Join(dir, "go.sum"))
	require.NoError(t, err)
	var mods []string
	for line := range strings.Lines(string(sum)) {
		mod, _, _ := strings.Cut(line, " ")
		if len(mods) == 0 || mods[len(mods)-1] != mod {
			mods = append(mods, mod)
		}
	}
	return mods
}

func TestModuleImportingTheSDKTidiesWithoutTheBrowserLibraries(t *testing.T) {
	root := repoRoot(t)
	dir := newModule(t, root, "example.com/shop")
	main := "package main\n\nimport billing \"github.com/billingsdk/billing-go\"\n\nfunc main() { println(billing.Version) }\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(main), 0o644))

	goIn(t, dir, "mod", "tidy")

	mods := sumModules(t, dir)
	t.Logf("go.sum of a module importing only billing names %d modules: %s", len(mods), strings.Join(mods, " "))
	for _, mod := range mods {
		for _, browser := range browserModules {
			assert.NotContains(t, mod, browser, "a module importing the SDK must not need the browser tests' libraries")
		}
	}
}

// commandModules are the modules the billing command (cmd/billing, a module of its own)
// needs for PostgreSQL, which a merchant's module must never download because of the SDK.
var commandModules = []string{"jackc/pgx", "jackc/pgpassfile", "jackc/pgservicefile", "jackc/puddle"}

// A merchant's module that imports the SDK, billingtest and the sandbox-control client
// tidies offline (GOPROXY=off: nothing is fetched) into a go.sum that names no module the
// SDK's own go.sum does not, and none of the billing command's.
func TestMerchantTidyFetchesNothingTheCommandNeeds(t *testing.T) {
	root := repoRoot(t)
	require.FileExists(t, filepath.Join(root, "cmd", "billing", "go.mod"), "the billing command is a module of its own")
	dir := newModule(t, root, "example.com/shop")
	main := "package main\n\nimport (\n\tbilling \"github.com/billingsdk/billing-go\"\n" +
		"\t\"github.com/billingsdk/billing-go/billingtest\"\n" +
		"\t\"github.com/billingsdk/billing-go/billingtest/sandboxctl\"\n)\n\n" +
		"func main() {\n\tprintln(billing.Version, sandboxctl.DefaultURL)\n\t_, _ = billingtest.Start()\n}\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(main), 0o644))

	cmd := exec.Command("go", "mod", "tidy")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOPROXY=off")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go mod tidy with GOPROXY=off needed a module it would have fetched:\n%s", out)

	rootSum := map[string]bool{}
	for _, mod := range sumModules(t, root) {
		rootSum[mod] = true
	}
	for _, mod := range sumModules(t, dir) {
		assert.True(t, rootSum[mod], "the merchant's go.sum names %s, which the SDK's does not", mod)
		for _, pg := range commandModules {
			assert.NotContains(t, mod, pg, "a module importing the SDK must not need the billing command's libraries")
		}
	}
}

func TestEveryExampleBuildsWhenCopiedAlone(t *testing.T) {
	root := repoRoot(t)
	entries, err := os.ReadDir(filepath.Join(root, "examples"))
	require.NoError(t, err)
	n := 0
	for _, e := range entries {
		// examples/sandbox runs the sandbox's server itself, which lives in the SDK's
		// internal packages: it is run from this repository, not copied.
		if !e.IsDir() || e.Name() == "sandbox" || e.Name() == "internal" {
			continue
		}
		name := e.Name()
		// An example with a go.mod of its own (its dependencies stay out of the SDK's
		// go.mod) is vetted and tested as that module, where it lives.
		if _, err := os.Stat(filepath.Join(root, "examples", name, "go.mod")); err == nil {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src := filepath.Join(root, "examples", name)
			dir := newModule(t, root, "example.com/"+name)
			files, err := filepath.Glob(filepath.Join(src, "*.go"))
			require.NoError(t, err)
			require.NotEmpty(t, files)
			for _, f := range files {
				b, err := os.ReadFile(f)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644))
			}
			goIn(t, dir, "mod", "tidy")
			goIn(t, dir, "vet", ".") // compiles the program and its test
		})
	}
	assert.GreaterOrEqual(t, n, 10, "examples found")
}
