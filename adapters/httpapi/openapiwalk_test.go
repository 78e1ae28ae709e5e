package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/health"
	"github.com/earshothq/earshot/testkit/dbtest"
)

// openAPI is the served document, decoded, with its $refs followed on
// demand.
type openAPI map[string]any

func loadOpenAPI(t *testing.T) openAPI {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func (d openAPI) resolve(v any) map[string]any {
	m, _ := v.(map[string]any)
	for m != nil && m["$ref"] != nil {
		var cur any = map[string]any(d)
		for _, part := range strings.Split(strings.TrimPrefix(m["$ref"].(string), "#/"), "/") {
			cur = cur.(map[string]any)[part]
		}
		m, _ = cur.(map[string]any)
	}
	return m
}

// operation returns the operation of method on path, nil when the
// document has none.
func (d openAPI) operation(method, path string) map[string]any {
	return d.resolve(d.resolve(d.resolve(d["paths"])[path])[strings.ToLower(method)])
}

// errorCodes are the codes the Error schema lists.
func (d openAPI) errorCodes() []string {
	e := d.resolve(d.resolve(d.resolve(d.resolve(d.resolve(d["components"])["schemas"])["Error"])["properties"])["error"])
	var codes []string
	for _, c := range d.resolve(d.resolve(e["properties"])["code"])["enum"].([]any) {
		codes = append(codes, c.(string))
	}
	return codes
}

// answer is one answer a route gave.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// checkAnswers holds each answer of an operation against the document:
// its status is declared, the rate headers and Retry-After it carries are
// declared there, its Content-Type is a media type the document gives
// that status, and an error's code is one the Error schema lists. With
// bodies, a JSON success also has the shape of the status's schema: the
// answers of services that answer as the real ones do, not of probes
// that answer zero records.
func checkAnswers(t *testing.T, d openAPI, op string, answers []answer, bodies bool) {
	t.Helper()
	method, path, _ := strings.Cut(op, " ")
	o := d.operation(method, path)
	if o == nil {
		t.Errorf("%s is not in the document", op)
		return
	}
	responses := d.resolve(o["responses"])
	codes := d.errorCodes()
	said := map[string]bool{}
	errorf := func(format string, args ...any) {
		if msg := fmt.Sprintf(format, args...); !said[msg] {
			said[msg] = true
			t.Error(msg)
		}
	}
	for _, a := range answers {
		resp := d.resolve(responses[fmt.Sprint(a.status)])
		if resp == nil {
			errorf("%s answers %d (%s), which the document does not declare", op, a.status, strings.TrimSpace(string(a.body)))
			continue
		}
		declared := d.resolve(resp["headers"])
		for _, name := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "Retry-After"} {
			if a.header.Get(name) != "" && declared[name] == nil {
				errorf("%s %d carries %s, which the document does not declare there", op, a.status, name)
			}
		}
		// A wait the document promises is there: the helper needs it to
		// send the request again.
		if declared["Retry-After"] != nil && a.header.Get("Retry-After") == "" {
			errorf("%s %d has no Retry-After, which the document promises", op, a.status)
		}
		media, _, _ := mime.ParseMediaType(a.header.Get("Content-Type"))
		if content := d.resolve(resp["content"]); content[media] == nil {
			errorf("%s %d is %q, which the document does not give it", op, a.status, media)
		}
		if schema := d.resolve(d.resolve(d.resolve(resp["content"])[media])["schema"]); bodies && a.status < 300 && media == "application/json" && schema != nil {
			var v any
			if err := json.Unmarshal(a.body, &v); err != nil {
				errorf("%s %d: %v", op, a.status, err)
			} else if err := d.conforms(v, schema, "body"); err != nil {
				errorf("%s %d: %v: %s", op, a.status, err, strings.TrimSpace(string(a.body)))
			}
		}
		if a.status >= 400 {
			var e errorBody
			if err := json.Unmarshal(a.body, &e); err != nil || e.Error.Code == "" {
				errorf("%s %d: not the error body: %s", op, a.status, a.body)
			} else if !slices.Contains(codes, e.Error.Code) {
				errorf("%s %d: code %q is not among the Error schema's codes %v", op, a.status, e.Error.Code, codes)
			}
		}
	}
}

// helperProbe stands for every service behind the helper endpoints, as
// the real ones behave: each refuses a platform that is not one; then
// each fails with fail when it is set.
type helperProbe struct{ fail error }

func (p *helperProbe) check(platform string) error {
	if _, err := core.ParsePlatform("platform", platform); err != nil {
		return err
	}
	return p.fail
}

func (p *helperProbe) IngestBatch(_ context.Context, _ string, b core.IngestBatch) (string, int, int, error) {
	if pl, err := core.ParsePlatform("platform", b.Platform); err == nil {
		if _, err := b.Unread.On(pl); err != nil {
			return "", 0, 0, err
		}
	}
	return "a1", len(b.Posts), 0, p.check(b.Platform)
}

func (p *helperProbe) Phrases(_ context.Context, _, platform string) ([]core.Phrase, error) {
	return nil, p.check(platform)
}

func (p *helperProbe) Session(_ context.Context, _, platform string) (json.RawMessage, error) {
	cookies, err := core.ParseCookieJar(core.X, []byte(freshXJar))
	if err != nil {
		return nil, err
	}
	return core.EncodeCookieJar(cookies), p.check(platform)
}

func (p *helperProbe) SetSession(_ context.Context, _, platform string, _ []byte) (core.Account, int, error) {
	return core.Account{ID: "a1", Platform: core.X}, 2, p.check(platform)
}

func (p *helperProbe) Report(_ context.Context, _ string, s health.Signal) (health.Status, error) {
	return health.StatusOf("a1", s.Platform, true, health.Record{}), p.check(string(s.Platform))
}

// Every answer of every helper route, under each condition its edge, its
// decoder and the services behind it can produce, is one the document
// declares for the operation: status, headers, content type and error
// code. The services fail only as the real ones can: a plan limit where
// an account may be connected, not found for a session never stored,
// and service_unavailable from ingest while scoring is behind.
func TestOpenAPIDeclaresEveryHelperAnswer(t *testing.T) {
	d := loadOpenAPI(t)
	p := &helperProbe{}
	lim := &switchLimiter{}
	keys := keyOf{
		"svc_ingest_one": {ID: "i1", OwnerID: "o1", Kind: core.IngestKey},
	}
	bodies := map[string]string{
		"POST /ingest":         oneBatch,
		"PUT /session":         freshXJar,
		"POST /account-status": `{"platform":"x","status":200}`,
	}
	// The failures each service can give beyond a failing store.
	fails := map[string][]core.Kind{
		"POST /ingest":         {core.KindPlanLimit, core.KindUnavailable},
		"GET /session":         {core.KindNotFound},
		"PUT /session":         {core.KindPlanLimit},
		"POST /account-status": {core.KindPlanLimit},
	}
	for _, proxy := range []string{"", "http://u:p@proxy.example.com:3128"} {
		h := NewHelper(HelperConfig{Limiter: lim, BodyWait: time.Millisecond, ProxyURL: proxy,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, keys, p, p)
		h.HandleAccountStatus(p)
		routes := h.routes()
		routes = append(routes, route{method: "POST", path: "/account-status"})
		for _, r := range routes {
			op := r.method + " " + r.path
			var got []answer
			send := func(key, query, body string, over bool) {
				req := httptest.NewRequest(r.method, r.path+"?"+query, strings.NewReader(body))
				if key != "" {
					req.Header.Set("Authorization", "Bearer "+key)
				}
				if over {
					req.ContentLength = maxHelperBody + 1
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				got = append(got, answer{rec.Code, rec.Header(), rec.Body.Bytes()})
			}
			body := bodies[op]
			send("svc_ingest_one", "platform=x", body, false)    // the answer
			send("", "platform=x", body, false)                  // no key
			send("svc_api_all", "platform=x", body, false)       // an API key, or an unknown one
			send("svc_ingest_one", "platform=x", body, true)     // a body over the limit
			send("svc_ingest_one", "platform=nope", body, false) // an unknown platform
			send("svc_ingest_one", "", "{", false)               // no platform, a malformed body
			send("svc_ingest_one", "", `{"x":1}`, false)         // an unknown field
			if op == "POST /ingest" {                            // unreadCommunities not names
				send("svc_ingest_one", "", `{"platform":"reddit","unreadCommunities":["no such name!"]}`, false)
				send("svc_ingest_one", "", `{"platform":"x","unreadPhrases":"acme"}`, false) // unreadPhrases not an array
			}
			for _, k := range append(fails[op], core.KindInternal) {
				p.fail = core.Errorf(k, "refused")
				send("svc_ingest_one", "platform=x", body, false)
			}
			p.fail = nil
			lim.deny = true
			send("svc_ingest_one", "platform=x", body, false) // over the rate limit
			lim.deny = false
			if r.method != http.MethodGet { // every body slot taken
				for range h.bodies.perKey {
					if !h.bodies.acquire(context.Background(), "i1", time.Second) {
						t.Fatal("no slot")
					}
				}
				send("svc_ingest_one", "platform=x", body, false)
				for range h.bodies.perKey {
					h.bodies.release("i1")
				}
			}
			checkAnswers(t, d, op, got, true)
		}
	}
}

// The answers of the /api/v1 routes, found as TestOpenAPIDeclaresEveryStatus
// finds them, carry a Content-Type the document gives the status and an
// error code the Error schema lists.
func TestOpenAPIErrorCodesAndContentTypes(t *testing.T) {
	d := loadOpenAPI(t)
	ops := routeAnswers(t)
	names := make([]string, 0, len(ops))
	for op := range ops {
		names = append(names, op)
	}
	sort.Strings(names)
	for _, op := range names {
		checkAnswers(t, d, op, ops[op], false)
	}
}

// conforms checks v against the parts of a schema the document uses for
// answers: type, required, properties, items and enum.
func (d openAPI) conforms(v any, schema map[string]any, at string) error {
	schema = d.resolve(schema)
	if types := schema["type"]; types != nil {
		var names []any
		if list, ok := types.([]any); ok {
			names = list
		} else {
			names = []any{types}
		}
		if !slices.ContainsFunc(names, func(n any) bool { return jsonTypeIs(v, n.(string)) }) {
			return fmt.Errorf("%s is %T, the document says %v", at, v, types)
		}
	}
	if enum, ok := schema["enum"].([]any); ok && !slices.Contains(enum, v) {
		return fmt.Errorf("%s is %v, not one of %v", at, v, enum)
	}
	switch x := v.(type) {
	case map[string]any:
		for _, r := range asList(schema["required"]) {
			if _, ok := x[r.(string)]; !ok {
				return fmt.Errorf("%s has no %s", at, r)
			}
		}
		props := d.resolve(schema["properties"])
		for name, pv := range x {
			if ps := d.resolve(props[name]); ps != nil {
				if err := d.conforms(pv, ps, at+"."+name); err != nil {
					return err
				}
			}
		}
	case []any:
		if items := d.resolve(schema["items"]); items != nil {
			for i, e := range x {
				if err := d.conforms(e, items, fmt.Sprintf("%s[%d]", at, i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func asList(v any) []any { l, _ := v.([]any); return l }

func jsonTypeIs(v any, name string) bool {
	switch x := v.(type) {
	case nil:
		return name == "null"
	case bool:
		return name == "boolean"
	case string:
		return name == "string"
	case float64:
		return name == "number" || name == "integer" && x == float64(int64(x))
	case []any:
		return name == "array"
	case map[string]any:
		return name == "object"
	}
	return false
}

// The documented bounds of GET /matches's and the export's integer
// parameters are the ones the handler holds, with the real service and
// store behind it: each bound is taken, one past it is invalid_parameter
// naming the parameter.
func TestOpenAPIParameterBounds(t *testing.T) {
	d := loadOpenAPI(t)
	matches := app.NewMatches(gormstore.NewMatchStore(dbtest.Memory(t)))
	srv := exportAPI(t, matches, unlimited{})
	for _, path := range []string{"/api/v1/matches", "/api/v1/matches/export"} {
		o := d.operation("GET", path)
		checked := 0
		for _, raw := range asList(o["parameters"]) {
			p := d.resolve(raw)
			schema := d.resolve(p["schema"])
			name := p["name"].(string)
			if schema["type"] != "integer" || p["in"] != "query" {
				continue
			}
			lo, hasLo := schema["minimum"].(float64)
			hi, hasHi := schema["maximum"].(float64)
			if !hasLo || !hasHi {
				t.Errorf("GET %s: %s has no bounds in the document", path, name)
				continue
			}
			checked++
			for v, want := range map[int]int{int(lo) - 1: 400, int(lo): 200, int(hi): 200, int(hi) + 1: 400} {
				q := fmt.Sprintf("%s=%d", name, v)
				if strings.HasSuffix(path, "export") {
					q += "&format=jsonl"
				}
				req, _ := http.NewRequest("GET", srv.URL+path+"?"+q, nil)
				req.Header.Set("Authorization", "Bearer svc_api_all")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != want || want == 400 && !strings.Contains(string(body), name) {
					t.Errorf("GET %s?%s: %d %s, want %d (documented %v to %v)", path, q, resp.StatusCode, body, want, lo, hi)
				}
			}
		}
		if checked == 0 {
			t.Errorf("GET %s: no bounded parameter checked", path)
		}
	}
}
