package earshot_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The dependency rule of ARCHITECTURE.md, checked on what the go command
// reports rather than on what the code is hoped to import.

const module = "github.com/earshothq/earshot"

// standard reports whether path is a standard-library import path: the go
// command's own rule is that such paths have no dot in the first element.
func standard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// within reports whether path is the module package dir or lies under it.
func within(path, dir string) bool {
	base := module + "/" + dir
	return path == base || strings.HasPrefix(path, base+"/")
}

// layer names the layer of a package of this module: "core", "ports",
// "app", "adapters/<name>", "cmd", "testkit", "helper", "match",
// "httpstatus", "redditjson", "clientip", or "" for anything else.
func layer(pkg string) string {
	rest, ok := strings.CutPrefix(pkg, module+"/")
	if !ok {
		return ""
	}
	top, sub, _ := strings.Cut(rest, "/")
	if top == "adapters" {
		name, _, _ := strings.Cut(sub, "/")
		if name == "" {
			return ""
		}
		return "adapters/" + name
	}
	switch top {
	case "core", "ports", "app", "cmd", "testkit", "helper", "match", "httpstatus", "redditjson", "clientip":
		return top
	}
	return ""
}

// violations returns the deps that pkg may not reach under the rule of its
// layer.
func violations(pkg string, deps []string) []string {
	var bad []string
	for _, d := range deps {
		if !allowed(pkg, d) {
			bad = append(bad, d)
		}
	}
	return bad
}

// helperLibraries are the import path prefixes of the libraries outside
// the standard one that the helper may reach: the browser driver its x
// and facebook readers use, and what that imports.
var helperLibraries = []string{"github.com/chromedp/", "github.com/gobwas/", "github.com/go-json-experiment/json"}

func allowed(pkg, dep string) bool {
	if standard(dep) {
		return true
	}
	switch l := layer(pkg); {
	case l == "core":
		return within(dep, "core")
	case l == "ports":
		return within(dep, "core") || within(dep, "ports")
	case l == "app":
		return within(dep, "core") || within(dep, "ports") || within(dep, "app") || within(dep, "match")
	case l == "match":
		return within(dep, "core") || within(dep, "match")
	case l == "httpstatus":
		return within(dep, "core") || within(dep, "httpstatus")
	case l == "redditjson":
		return within(dep, "redditjson")
	case l == "clientip":
		return within(dep, "clientip")
	case l == "helper":
		if strings.HasPrefix(dep, module+"/") || dep == module {
			return within(dep, "core") || within(dep, "helper") || within(dep, "redditjson")
		}
		for _, lib := range helperLibraries {
			if strings.HasPrefix(dep, lib) {
				return true
			}
		}
		return false
	case strings.HasPrefix(l, "adapters/"):
		other := layer(dep)
		if other == "app" {
			// Adapters are driven through ports; the one thing of app
			// they share is the public record of a match.
			return within(dep, "app/record")
		}
		return !strings.HasPrefix(other, "adapters/") || other == l
	}
	return true
}

func TestViolations(t *testing.T) {
	m := func(p string) string { return module + "/" + p }
	cases := []struct {
		name string
		pkg  string
		deps []string
		want []string
	}{
		{"core: standard and core", m("core"), []string{"fmt", "unicode/utf8", m("core"), m("core/score")}, nil},
		{"core: ports", m("core"), []string{"fmt", m("ports")}, []string{m("ports")}},
		{"core: third party", m("core"), []string{"gorm.io/gorm", "golang.org/x/text/cases"}, []string{"gorm.io/gorm", "golang.org/x/text/cases"}},
		{"core: look-alike prefix", m("core"), []string{m("corex"), m("core_test")}, []string{m("corex"), m("core_test")}},
		{"core: module root", m("core"), []string{module}, []string{module}},
		{"core subpackage: app", m("core/score"), []string{m("core"), m("app")}, []string{m("app")}},
		{"ports: core", m("ports"), []string{"context", m("core"), m("core/health"), m("ports")}, nil},
		{"ports: app", m("ports"), []string{m("app")}, []string{m("app")}},
		{"ports: adapter", m("ports"), []string{m("adapters/gormstore")}, []string{m("adapters/gormstore")}},
		{"ports: third party", m("ports"), []string{"github.com/google/uuid"}, []string{"github.com/google/uuid"}},
		{"adapter: own library and own tree", m("adapters/gormstore"), []string{"gorm.io/gorm", m("core"), m("ports"), m("adapters/gormstore/internal/row")}, nil},
		{"adapter: another adapter", m("adapters/gormstore"), []string{m("adapters/bus")}, []string{m("adapters/bus")}},
		{"adapter subpackage: own root", m("adapters/bus/amqp"), []string{m("adapters/bus")}, nil},
		{"adapter subpackage: other", m("adapters/bus/amqp"), []string{m("adapters/httpapi/encode")}, []string{m("adapters/httpapi/encode")}},
		{"adapter: look-alike name", m("adapters/bus"), []string{m("adapters/busx")}, []string{m("adapters/busx")}},
		{"app: core, ports, the matcher", m("app"), []string{"net/http", m("core"), m("ports"), m("match")}, nil},
		{"app: fx", m("app"), []string{"go.uber.org/fx"}, []string{"go.uber.org/fx"}},
		{"app: adapter", m("app"), []string{m("adapters/gormstore")}, []string{m("adapters/gormstore")}},
		{"app: driver", m("app"), []string{"gorm.io/gorm", "go.uber.org/fxx"}, []string{"gorm.io/gorm", "go.uber.org/fxx"}},
		{"helper: core and its own tree", m("helper/reddit"), []string{"net/http", m("core"), m("helper"), "github.com/chromedp/chromedp", "github.com/gobwas/ws"}, nil},
		{"helper: app, ports, adapters, server", m("helper"), []string{m("app"), m("ports"), m("adapters/reddit"), m("server")}, []string{m("app"), m("ports"), m("adapters/reddit"), m("server")}},
		{"helper: other libraries", m("helper"), []string{"gorm.io/gorm", m("helperx")}, []string{"gorm.io/gorm", m("helperx")}},
		{"match: standard and core", m("match"), []string{"unicode/utf8", "unsafe", m("core"), m("match")}, nil},
		{"match: ports, app, adapters, third party", m("match"), []string{m("ports"), m("app"), m("adapters/httpapi"), "github.com/petar-dambovaliev/aho-corasick"},
			[]string{m("ports"), m("app"), m("adapters/httpapi"), "github.com/petar-dambovaliev/aho-corasick"}},
		{"match: look-alike name", m("match"), []string{m("matchbench"), m("core/matchx")}, []string{m("matchbench")}},
		{"httpstatus: standard and core", m("httpstatus"), []string{"net/http", m("core"), m("httpstatus")}, nil},
		{"httpstatus: ports, app, adapters, match", m("httpstatus"), []string{m("ports"), m("app"), m("adapters/httpapi"), m("match")},
			[]string{m("ports"), m("app"), m("adapters/httpapi"), m("match")}},
		{"redditjson: standard library only", m("redditjson"), []string{"encoding/json", m("redditjson")}, nil},
		{"redditjson: core, adapters, helper", m("redditjson"), []string{m("core"), m("adapters/reddit"), m("helper")},
			[]string{m("core"), m("adapters/reddit"), m("helper")}},
		{"clientip: standard library only", m("clientip"), []string{"net/netip", m("clientip")}, nil},
		{"clientip: core, adapters", m("clientip"), []string{m("core"), m("adapters/httpapi")}, []string{m("core"), m("adapters/httpapi")}},
		{"helper: the reddit reader", m("helper/reddit"), []string{m("redditjson")}, nil},
		{"adapters: the reddit reader", m("adapters/reddit"), []string{m("redditjson")}, nil},
		{"adapter: the match record only", m("adapters/httpapi"), []string{m("app/record"), m("app")}, []string{m("app")}},
		{"adapters: the status table", m("adapters/dashboard"), []string{m("httpstatus"), m("core")}, nil},
		{"no rule for cmd", m("cmd/earshot"), []string{m("adapters/bus"), "gorm.io/gorm"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := violations(c.pkg, c.deps); !reflect.DeepEqual(got, c.want) {
				t.Errorf("violations(%s, %v) = %v, want %v", c.pkg, c.deps, got, c.want)
			}
		})
	}
}

// goList runs the go command's list with args in the module root and
// returns the non-empty output lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	out := goCmd(t, append([]string{"list"}, args...)...)
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

func goCmd(t *testing.T, args ...string) []byte {
	t.Helper()
	// go test puts its own GOROOT/bin first on PATH for the test binary.
	bin, err := exec.LookPath("go")
	if err != nil {
		if root := os.Getenv("GOROOT"); root != "" {
			bin = filepath.Join(root, "bin", "go")
		}
	}
	if bin == "" {
		t.Skip("no go command found to list packages with")
	}
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

func requireListed(t *testing.T, pkgs []string, want string) {
	t.Helper()
	for _, p := range pkgs {
		if p == want {
			return
		}
	}
	t.Fatalf("%s missing from the go list output %v: the check would pass on nothing", want, pkgs)
}

// checkReach fails for every package outside the standard library that
// the packages under dir reach and their layer may not; rule says what
// the layer may use.
func checkReach(t *testing.T, dir, rule string) {
	t.Helper()
	deps := goList(t, "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./"+dir+"/...")
	requireListed(t, deps, module+"/"+dir)
	for _, v := range violations(module+"/"+dir, deps) {
		t.Errorf("%s reaches %s; %s", dir, v, rule)
	}
}

func TestCoreImportsOnlyStandardLibrary(t *testing.T) {
	checkReach(t, "core", "core may use only the standard library")
}

// The helper package is embedded by programs on owners' machines: it
// reaches core, the shared reading of reddit's JSON (redditjson), the
// standard library and the browser driver that part of its readers need
// (chromedp and what that imports), nothing of the server.
func TestHelperImportsOnlyCore(t *testing.T) {
	checkReach(t, "helper", "helper may use only core, redditjson, the standard library and chromedp")
}

// The matcher is a package of its own outside core, so core reads as the
// domain: it follows core's folding (core.FoldRune) and reaches nothing
// else but the standard library.
func TestMatchImportsOnlyCore(t *testing.T) {
	checkReach(t, "match", "match may use only core and the standard library")
}

// httpstatus is the table every HTTP edge shares; adapters import it, so
// it may reach nothing of theirs.
func TestHTTPStatusImportsOnlyCore(t *testing.T) {
	checkReach(t, "httpstatus", "httpstatus may use only core and the standard library")
}

// redditjson is the reading of reddit's JSON that the server and the
// helper share; both import it, so it reaches nothing of either.
func TestRedditJSONImportsOnlyStandardLibrary(t *testing.T) {
	checkReach(t, "redditjson", "redditjson may use only the standard library")
}

// clientip names the client every per-client count uses; both HTTP
// adapters import it, so it reaches nothing of theirs.
func TestClientIPImportsOnlyStandardLibrary(t *testing.T) {
	checkReach(t, "clientip", "clientip may use only the standard library")
}

func TestPortsImportOnlyCore(t *testing.T) {
	checkReach(t, "ports", "ports may use only core")
}

func TestAdaptersDoNotImportEachOther(t *testing.T) {
	lines := goList(t, "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./adapters/...")
	if len(lines) == 0 {
		t.Fatal("go list found no adapter packages")
	}
	trees := map[string]bool{}
	for _, line := range lines {
		f := strings.Fields(line)
		pkg := f[0]
		l := layer(pkg)
		if !strings.HasPrefix(l, "adapters/") {
			t.Fatalf("go list returned %s for ./adapters/...", pkg)
		}
		trees[l] = true
		for _, v := range violations(pkg, f[1:]) {
			t.Errorf("%s imports %s; adapters never import each other", pkg, v)
		}
	}
	t.Logf("checked %d adapter trees in %d packages", len(trees), len(lines))
}

// TestAppImportsOnlyCoreAndPorts checks everything app reaches, not only
// what its files name: embedding app must not pull in an adapter, a driver
// or fx. The composition root lives in package server, outside app. The
// matcher (match) is app's too: it reaches only core.
func TestAppImportsOnlyCoreAndPorts(t *testing.T) {
	checkReach(t, "app", "app may use only core, ports and match (wiring belongs in server)")
}

// TestServerIsTheCompositionRoot checks that the one package that binds
// adapters to app is server, and that cmd reaches adapters only through it.
func TestServerIsTheCompositionRoot(t *testing.T) {
	imports := goList(t, "-f", "{{join .Imports \" \"}}", "./server")
	requireListed(t, strings.Fields(strings.Join(imports, " ")), module+"/app")
	lines := goList(t, "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./cmd/...")
	for _, line := range lines {
		f := strings.Fields(line)
		for _, d := range f[1:] {
			if strings.HasPrefix(layer(d), "adapters/") {
				t.Errorf("%s imports %s; cmd picks adapters through server", f[0], d)
			}
		}
	}
}
