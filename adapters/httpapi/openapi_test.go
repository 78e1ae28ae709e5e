package httpapi

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
)

// The document and the routes must name the same operations: a route
// without documentation, or documentation without a route, fails.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi %q", doc.OpenAPI)
	}
	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			if method == "parameters" || !strings.HasPrefix(path, "/api/v1/") { // helper paths: TestOpenAPIHelperExtensions
				continue
			}
			documented[strings.ToUpper(method)+" "+path] = true
			var o struct {
				Scope string `json:"x-scope"`
			}
			_ = json.Unmarshal(op, &o)
			for _, r := range (&API{}).routes() {
				if r.method == strings.ToUpper(method) && r.path == path && string(r.scope) != o.Scope {
					t.Errorf("%s %s: x-scope %q, route scope %q", r.method, path, o.Scope, r.scope)
				}
			}
		}
	}
	routed := map[string]bool{}
	for _, r := range (&API{}).routes() {
		routed[r.method+" "+r.path] = true
	}
	var missing, extra []string
	for op := range routed {
		if !documented[op] {
			missing = append(missing, op)
		}
	}
	for op := range documented {
		if !routed[op] {
			extra = append(extra, op)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 || len(extra) > 0 {
		t.Fatalf("routes without documentation: %v; documented without a route: %v", missing, extra)
	}
	if len(routed) < 9 {
		t.Fatalf("only %d routes", len(routed))
	}
}

// Every $ref in the document points at something that exists.
func TestOpenAPIRefsResolve(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(v any)
	n := 0
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok {
				n++
				var cur any = doc
				for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
					m, ok := cur.(map[string]any)
					if !ok || m[part] == nil {
						t.Errorf("dangling $ref %s", ref)
						return
					}
					cur = m[part]
				}
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(doc)
	if n == 0 {
		t.Fatal("no $ref checked")
	}
}
