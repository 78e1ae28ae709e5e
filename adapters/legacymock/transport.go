package legacymock

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"reflect"
	"strings"
	"time"

	"github.com/go-kit/kit/endpoint"
	httptransport "github.com/go-kit/kit/transport/http"

	"github.com/earshothq/earshot/core"
)

// maxBody caps every request body; the spec names no limit and 1 MB is far
// above any legitimate payload of this API (listing images are URLs).
const maxBody = 1 << 20

// reply is an endpoint's response: a status and the already-encoded JSON
// payload. It implements go-kit's StatusCoder.
type reply struct {
	status int
	body   []byte
}

func (r reply) StatusCode() int { return r.status }

func encodeReply(res result) (reply, error) {
	b, err := json.Marshal(res.body)
	if err != nil {
		return reply{}, core.Wrap(core.KindInternal, err, "")
	}
	return reply{status: res.status, body: b}, nil
}

// encodeResponse is the one response encoder of every route.
func encodeResponse(_ context.Context, w http.ResponseWriter, response any) error {
	r, isReply := response.(reply)
	if !isReply {
		return core.Errorf(core.KindInternal, "unexpected response %T", response)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(r.status)
	_, err := w.Write(append(r.body, '\n'))
	return err
}

// statusOf is the one table from error kind to HTTP status.
var statusOf = map[core.Kind]int{
	core.KindInvalid:         http.StatusBadRequest,
	core.KindInvalidRequest:  http.StatusBadRequest,
	core.KindInvalidJSON:     http.StatusBadRequest,
	core.KindUnauthorized:    http.StatusUnauthorized,
	core.KindForbidden:       http.StatusForbidden,
	core.KindNotFound:        http.StatusNotFound,
	core.KindConflict:        http.StatusConflict,
	core.KindPayloadTooLarge: http.StatusRequestEntityTooLarge,
	core.KindRateLimited:     http.StatusTooManyRequests,
	core.KindUnavailable:     http.StatusServiceUnavailable,
}

// errorBody is the failure envelope of the spec.
type errorBody struct {
	Error string `json:"error"`
}

// encodeError is the one error encoder: {error: message} with the status
// of the error's kind. Internal errors never show their cause.
func encodeError(_ context.Context, err error, w http.ResponseWriter) {
	status, found := statusOf[core.KindOf(err)]
	if !found {
		status = http.StatusInternalServerError
	}
	writeError(w, status, core.Message(err))
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	b, _ := json.Marshal(errorBody{Error: msg})
	w.Write(append(b, '\n'))
}

// logged is the one endpoint middleware: it logs every call with its
// outcome, internal errors at error level with their cause.
func logged(log *slog.Logger, route string) endpoint.Middleware {
	return func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, req any) (any, error) {
			start := time.Now()
			resp, err := next(ctx, req)
			switch {
			case err == nil:
				log.DebugContext(ctx, "mock call", "route", route, "took", time.Since(start))
			case core.KindOf(err) == core.KindInternal:
				log.ErrorContext(ctx, "mock call failed", "route", route, "err", err)
			default:
				log.DebugContext(ctx, "mock call refused", "route", route, "err", err)
			}
			return resp, err
		}
	}
}

// decodeBody is the decoder of a route whose input is a JSON object of
// type T in the body.
func decodeBody[T any](_ context.Context, r *http.Request) (any, error) {
	var req T
	return req, decodeJSON(r, &req, false)
}

// pathID is embedded in the request of a route that names its row in the
// path as well as taking a body; any id in the body is ignored.
type pathID struct{ id string }

func (p *pathID) setID(id string) { p.id = id }

// decodeBodyAt is the decoder of a route whose input is the row named by
// the path parameter param and a JSON object of type T in the body,
// which may be empty when optional is true.
func decodeBodyAt[T any, P interface {
	*T
	setID(string)
}](param string, optional bool) httptransport.DecodeRequestFunc {
	return func(_ context.Context, r *http.Request) (any, error) {
		var req T
		P(&req).setID(r.PathValue(param))
		return req, decodeJSON(r, &req, optional)
	}
}

// decodePath is the decoder of a route whose only input is the path
// parameter param.
func decodePath(param string) httptransport.DecodeRequestFunc {
	return func(_ context.Context, r *http.Request) (any, error) { return r.PathValue(param), nil }
}

// decodeJSON reads the request body into v. A body is required to be a
// JSON object; an empty body is accepted only when optional is true (v is
// then left untouched). Errors are caller-safe: bad JSON and wrong types
// give KindInvalidJSON, an oversized body KindPayloadTooLarge.
func decodeJSON(r *http.Request, v any, optional bool) error {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return core.Errorf(core.KindPayloadTooLarge, "request body is larger than %d bytes", maxBody)
		}
		return core.Wrap(core.KindInvalidRequest, err, "could not read the request body")
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		if optional {
			return nil
		}
		return core.Errorf(core.KindInvalidJSON, "request body must be a JSON object")
	}
	if data[0] != '{' {
		return core.Errorf(core.KindInvalidJSON, "request body must be a JSON object")
	}
	// The bounds come first: a body they refuse is never built into
	// values, which cost some fifty times its size. A number out of range
	// is reported after the decoding, whose message names a declared
	// field by its full path.
	outOfRange, err := checkSizes(data)
	if err != nil {
		return err
	}
	if err := unmarshal(exactNames(data, reflect.TypeOf(v)), v); err != nil {
		return jsonError(err, v)
	}
	return outOfRange
}

// exactNames drops from a body of type t every member whose name matches
// a declared field only when case is ignored. JSON names are compared as
// written, and the spec spells each field one way; encoding/json matches
// them as strings.EqualFold does, so {"Status": ...} (or {"ſtatus": ...})
// was taken as status. Dropped, such a member is an unknown field, which
// the routes ignore. A body with none, or not valid JSON (which the
// decoding reports), is returned as it is.
func exactNames(data []byte, t reflect.Type) []byte {
	if !json.Valid(data) {
		return data
	}
	if out, changed := exactValue(data, t); changed {
		return out
	}
	return data
}

// exactValue is exactNames over one valid JSON value read as type t:
// an object of a struct type loses its miscased members, and so do the
// objects of struct types it holds. (No request declares a list of
// objects; a list is kept as it is.)
func exactValue(raw []byte, t reflect.Type) ([]byte, bool) {
	t = unwrapField(t)
	raw = bytes.TrimSpace(raw)
	if t.Kind() != reflect.Struct || len(raw) == 0 || raw[0] != '{' {
		return raw, false
	}
	return exactObject(raw, t)
}

// exactObject rebuilds a JSON object of struct type t in its order,
// without the members named like a field of t but not exactly.
func exactObject(raw []byte, t reflect.Type) ([]byte, bool) {
	fields := jsonFields(t)
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return raw, false
	}
	var out bytes.Buffer
	out.WriteByte('{')
	changed, n := false, 0
	for dec.More() {
		tok, err := dec.Token()
		name, isStr := tok.(string)
		var val json.RawMessage
		if err != nil || !isStr || dec.Decode(&val) != nil {
			return raw, false
		}
		if ft, declared := fields[name]; declared {
			if v, c := exactValue(val, ft); c {
				val, changed = v, true
			}
		} else if foldsToField(fields, name) {
			changed = true
			continue
		}
		key, err := json.Marshal(name)
		if err != nil {
			return raw, false
		}
		if n++; n > 1 {
			out.WriteByte(',')
		}
		out.Write(key)
		out.WriteByte(':')
		out.Write(val)
	}
	out.WriteByte('}')
	return out.Bytes(), changed
}

// unmarshal is json.Unmarshal keeping the numbers of free-form parts
// (the brand) as json.Number: read as float64, an integer past 2^53 was
// stored rounded, not as it was sent.
func unmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if rest := bytes.TrimSpace(data[dec.InputOffset():]); len(rest) > 0 {
		return fmt.Errorf("invalid character %q after the top-level value at byte %d", rest[0], dec.InputOffset())
	}
	return nil
}

// Field bounds of every request body: no text longer than maxString
// bytes, no list of more than maxItems items nor object of more than
// maxItems fields, no object or list nested more
// than maxDepth deep. They hold wherever a body is decoded, so free-form
// parts (the brand) are bound as well as the fields the rules name; the
// store bounds what a change adds in all. The depth bound comes first
// because the state file is indented: every level of a value costs a
// line as wide as its depth, so a small deep body would encode to
// hundreds of megabytes before the store could weigh it.
const (
	maxString = 8 << 10
	maxItems  = 200
	maxDepth  = 20
)

// checkSizes walks a JSON body and refuses a text (key or value), a list
// or an object (maxItems fields) or a nesting over the bounds, naming the
// nearest field. It stops quietly where the body stops being valid JSON,
// which the decoding then reports. The first number no float64 holds is
// handed back apart, as outOfRange.
func checkSizes(data []byte) (outOfRange, err error) {
	type frame struct {
		array   bool
		items   int
		wantKey bool
		key     string
	}
	var stack []*frame
	name := func() string {
		for i := len(stack) - 1; i >= 0; i-- {
			if stack[i].key != "" {
				return stack[i].key
			}
		}
		return "the body"
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return outOfRange, nil // the end, or invalid JSON, which unmarshal reports
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			continue
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if s, ok := tok.(string); ok && len(s) > maxString {
			if top != nil && top.wantKey {
				return nil, core.Errorf(core.KindInvalid, "a field name in %s is longer than %d bytes", name(), maxString)
			}
			return nil, core.Errorf(core.KindInvalid, "%s is longer than %d bytes", name(), maxString)
		}
		if top != nil && top.wantKey {
			if top.items++; top.items > maxItems {
				// Named by the field that holds the object, not by its own fields.
				where := "the body"
				for i := len(stack) - 2; i >= 0 && where == "the body"; i-- {
					if stack[i].key != "" {
						where = stack[i].key
					}
				}
				return nil, core.Errorf(core.KindInvalid, "%s has more than %d fields", where, maxItems)
			}
			top.key, top.wantKey = tok.(string), false
			continue
		}
		// A number the free-form parts keep as sent must still be one
		// every client can read back.
		if n, isNum := tok.(json.Number); isNum && outOfRange == nil {
			if _, err := n.Float64(); err != nil {
				lit := string(n)
				if len(lit) > 40 {
					lit = lit[:40] + "..."
				}
				outOfRange = core.Errorf(core.KindInvalid, "the number %s in %s is out of range", lit, name())
			}
		}
		// A value starts.
		if top != nil {
			if top.array {
				if top.items++; top.items > maxItems {
					return nil, core.Errorf(core.KindInvalid, "%s has more than %d items", name(), maxItems)
				}
			} else {
				top.wantKey = true
			}
		}
		if d, ok := tok.(json.Delim); ok {
			if len(stack) == maxDepth {
				return nil, core.Errorf(core.KindInvalid, "%s is nested more than %d levels deep", name(), maxDepth)
			}
			stack = append(stack, &frame{array: d == '[', wantKey: d == '{'})
		}
	}
}

func jsonError(err error, v any) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr) && outOfRange(typeErr):
		where, lit := "the body", strings.TrimPrefix(typeErr.Value, "number ")
		if typeErr.Field != "" {
			where = typeErr.Field
		}
		if len(lit) > 40 {
			lit = lit[:40] + "..."
		}
		return core.Errorf(core.KindInvalidJSON, "the number %s in %s is out of range", lit, where)
	case errors.As(err, &typeErr) && typeErr.Field != "":
		// The error names the list, and the type of the item that was wrong.
		if list := fieldType(reflect.TypeOf(v), typeErr.Field); list != nil && list.Kind() == reflect.Slice && list != typeErr.Type {
			return core.Errorf(core.KindInvalidJSON, "%s must be an array of %s", typeErr.Field, describeItems(list.Elem()))
		}
		return core.Errorf(core.KindInvalidJSON, "%s must be %s", typeErr.Field, describeType(typeErr.Type))
	case errors.As(err, &typeErr):
		return core.Errorf(core.KindInvalidJSON, "request body must be a JSON object")
	case errors.As(err, &syntaxErr):
		return core.Errorf(core.KindInvalidJSON, "invalid JSON at byte %d: %v", syntaxErr.Offset, syntaxErr)
	default:
		return core.Errorf(core.KindInvalidJSON, "invalid JSON: %v", err)
	}
}

// outOfRange tells a number Go cannot hold (1e400, an integer past 64
// bits) from a value of the wrong type: only the first carries its
// literal in Value. A fraction for an integer field is of the wrong type.
func outOfRange(e *json.UnmarshalTypeError) bool {
	lit, isNum := strings.CutPrefix(e.Value, "number ")
	if !isNum || e.Type == nil {
		return false
	}
	switch e.Type.Kind() {
	case reflect.Float32, reflect.Float64:
		return true
	}
	return !strings.ContainsAny(lit, ".eE")
}

func describeType(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	one, _ := kindNames(t)
	return one
}

// describeItems names the items of a list of type t, in the plural.
func describeItems(t reflect.Type) string {
	_, many := kindNames(unwrapField(t))
	return many
}

// kindNames are the words for a JSON value of type t: one, and many.
func kindNames(t reflect.Type) (one, many string) {
	if t == nil {
		return "of another type", "values of another type"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string", "strings"
	case reflect.Bool:
		return "a boolean", "booleans"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer", "integers"
	case reflect.Float32, reflect.Float64:
		return "a number", "numbers"
	case reflect.Slice, reflect.Array:
		return "an array", "arrays"
	case reflect.Map, reflect.Struct:
		return "an object", "objects"
	}
	return "of another type", "values of another type"
}

// jsonFields are the JSON names the struct type t declares, with their
// types, the fields of an embedded struct included, as encoding/json
// reads them.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	var embedded []reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-":
		case f.Anonymous && tag == "" && unwrapField(f.Type).Kind() == reflect.Struct:
			embedded = append(embedded, unwrapField(f.Type))
		case !f.IsExported():
		case tag != "":
			out[tag] = f.Type
		default:
			out[f.Name] = f.Type
		}
	}
	// A field of t itself hides one of the same name it embeds.
	for _, e := range embedded {
		for name, ft := range jsonFields(e) {
			if _, hidden := out[name]; !hidden {
				out[name] = ft
			}
		}
	}
	return out
}

// foldsToField reports whether name is one of fields once case is
// ignored, as encoding/json would have read it.
func foldsToField(fields map[string]reflect.Type, name string) bool {
	for declared := range fields {
		if strings.EqualFold(declared, name) {
			return true
		}
	}
	return false
}

// fieldType is the type the request type t declares at path, the dotted
// JSON names of a decoding error's Field, pointers and optional[T] read as
// what they hold; nil when the path leaves the declared fields.
func fieldType(t reflect.Type, path string) reflect.Type {
	for _, name := range strings.Split(path, ".") {
		t = unwrapField(t)
		for t.Kind() == reflect.Slice {
			t = unwrapField(t.Elem())
		}
		if t.Kind() != reflect.Struct {
			return nil
		}
		next := reflect.Type(nil)
		for i := range t.NumField() {
			f := t.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.IsExported() && (tag == name || tag == "" && f.Name == name) {
				next = f.Type
				break
			}
		}
		if next == nil {
			return nil
		}
		t = next
	}
	return unwrapField(t)
}

var optionalType = reflect.TypeFor[interface{ isOptional() }]()

func unwrapField(t reflect.Type) reflect.Type {
	for {
		switch {
		case t.Kind() == reflect.Pointer:
			t = t.Elem()
		case t.Implements(optionalType):
			f, _ := t.FieldByName("Value")
			t = f.Type
		default:
			return t
		}
	}
}

// optional is a JSON field that tells "absent" from "null" from a value,
// which PATCH routes need.
type optional[T any] struct {
	Set   bool
	Null  bool
	Value T
}

// isOptional marks optional[T] for fieldType.
func (optional[T]) isOptional() {}

func (o *optional[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(b) == "null" {
		o.Null = true
		return nil
	}
	return json.Unmarshal(b, &o.Value)
}

// route builds the go-kit server of one route.
func (s *Server) route(name string, e endpoint.Endpoint, dec httptransport.DecodeRequestFunc) http.Handler {
	return httptransport.NewServer(
		logged(s.log, name)(e),
		dec,
		encodeResponse,
		httptransport.ServerErrorEncoder(encodeError),
	)
}

// query reads the query string of a route that filters by it. One that
// cannot be read is refused: net/url drops a pair it cannot read, and the
// filter in it would be silently left out.
func query(r *http.Request) (url.Values, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, core.Errorf(core.KindInvalid, "the query string cannot be read: %v", err)
	}
	return q, nil
}

// decodeNone is the decoder of routes that take no input.
func decodeNone(context.Context, *http.Request) (any, error) { return nil, nil }

// statusRecorder captures what the mux would answer for a request no
// pattern matches, so the answer can be rewritten as a JSON envelope.
type statusRecorder struct {
	header http.Header
	status int
}

func (r *statusRecorder) Header() http.Header         { return r.header }
func (r *statusRecorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *statusRecorder) WriteHeader(status int)      { r.status = status }

// unclean reports whether the mux redirects p to a cleaned form (a
// doubled slash, a dot segment) rather than serve it: the mux names the
// route of the cleaned path then, and the answer is its redirect.
func unclean(p string) bool {
	if p == "" || p[0] != '/' {
		return true
	}
	clean := path.Clean(p)
	if p[len(p)-1] == '/' && clean != "/" {
		clean += "/"
	}
	return clean != p
}

// ServeHTTP caps the body, dispatches through the mux, and answers requests
// that match no route with the error envelope: 405 (with Allow) when the
// path exists under another method, 404 otherwise.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	}
	h, pattern := s.mux.Handler(r)
	if pattern != "" && !unclean(r.URL.EscapedPath()) {
		s.mux.ServeHTTP(w, r)
		return
	}
	rec := &statusRecorder{header: http.Header{}, status: http.StatusOK}
	h.ServeHTTP(rec, r)
	switch {
	case rec.status == http.StatusMethodNotAllowed:
		w.Header().Set("Allow", rec.header.Get("Allow"))
		writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("Method %s is not allowed on %s", r.Method, r.URL.Path))
	case rec.status >= 300 && rec.status < 400:
		// The mux redirects a path it cleans (a doubled slash, a dot
		// segment); its answer is HTML or empty, and every answer of the
		// mock is JSON.
		loc := rec.header.Get("Location")
		w.Header().Set("Location", loc)
		writeError(w, rec.status, fmt.Sprintf("Moved: %s %s is served at %s", r.Method, r.URL.Path, loc))
	default:
		writeError(w, http.StatusNotFound, fmt.Sprintf("Not found: %s %s", r.Method, r.URL.Path))
	}
}
