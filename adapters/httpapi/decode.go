package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

func noRequest(context.Context, *http.Request) (any, error) { return nil, nil }

type idRequest struct{ id string }

func decodeID(_ context.Context, r *http.Request) (any, error) {
	return idRequest{id: r.PathValue("id")}, nil
}

type addPhraseRequest struct {
	Phrase    *string `json:"phrase"`
	Platform  *string `json:"platform"`
	Community *string `json:"community"`
	filtersBody

	idemKey string
}

// filtersBody is the filter fields of a phrase's create and update
// bodies, an extension of the spec's fields: each may be left out (or
// null), which on an update keeps the phrase's value.
type filtersBody struct {
	Exclude            *[]string `json:"exclude"`
	Require            *[]string `json:"require"`
	ExcludeAuthors     *[]string `json:"excludeAuthors"`
	ExcludeCommunities *[]string `json:"excludeCommunities"`
	MinLikes           *int      `json:"minLikes"`
	MinComments        *int      `json:"minComments"`
	TitleOnly          *bool     `json:"titleOnly"`
}

// change is the filter fields sent, as a change of a phrase's filters.
func (b filtersBody) change() core.PhraseFiltersChange {
	return core.PhraseFiltersChange{Exclude: b.Exclude, Require: b.Require, ExcludeAuthors: b.ExcludeAuthors,
		ExcludeCommunities: b.ExcludeCommunities, MinLikes: b.MinLikes, MinComments: b.MinComments, TitleOnly: b.TitleOnly}
}

func decodeAddPhrase(_ context.Context, r *http.Request) (any, error) {
	var req addPhraseRequest
	if err := decodeJSON(r, &req, maxBody); err != nil {
		return nil, err
	}
	switch {
	case req.Phrase == nil:
		return nil, core.Errorf(core.KindInvalid, "phrase is required")
	case req.Platform == nil:
		return nil, core.Errorf(core.KindInvalid, "platform is required")
	}
	if v := r.Header.Values("Idempotency-Key"); len(v) > 0 {
		if len(v) > 1 {
			return nil, core.Errorf(core.KindInvalid, "Idempotency-Key is given %d times: send it once", len(v))
		}
		if v[0] == "" {
			return nil, core.Errorf(core.KindInvalid, "Idempotency-Key must be 1 to 64 characters")
		}
		req.idemKey = v[0]
	}
	return req, nil
}

type patchPhraseRequest struct {
	Status *string `json:"status"`
	filtersBody

	id string
}

func decodePatchPhrase(_ context.Context, r *http.Request) (any, error) {
	var req patchPhraseRequest
	if err := decodeJSON(r, &req, maxBody); err != nil {
		return nil, err
	}
	if req.Status == nil && req.change().IsZero() {
		return nil, core.Errorf(core.KindInvalid, "status is required: listening or paused (or, to change the filters, one of exclude, require, excludeAuthors, excludeCommunities, minLikes, minComments, titleOnly)")
	}
	req.id = r.PathValue("id")
	return req, nil
}

func decodeListMatches(_ context.Context, r *http.Request) (any, error) {
	q, err := query(r)
	if err != nil {
		return nil, err
	}
	if err := onlyOnce(q, "limit", "platform", "min_score", "before", "q"); err != nil {
		return nil, err
	}
	var mq ports.MatchQuery
	if v, ok := single(q["limit"]); ok {
		// The range is checked with every other list's (core.CheckPage);
		// 0 would read as the default there, so it is refused here.
		n, err := strconv.Atoi(v)
		if err != nil || n == 0 {
			return nil, core.Errorf(core.KindInvalid, "limit must be a whole number from 1 to %d", core.MaxPageLimit)
		}
		mq.Limit = n
	}
	if v, ok := single(q["platform"]); ok {
		p, err := core.ParsePlatform("platform", v)
		if err != nil {
			return nil, err
		}
		mq.Platform = p
	}
	if v, ok := single(q["min_score"]); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, core.Errorf(core.KindInvalid, "min_score must be a whole number from 0 to 100")
		}
		mq.MinScore = &n
	}
	if v, ok := single(q["before"]); ok {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || f <= 0 {
			return nil, core.Errorf(core.KindInvalid, "before must be a positive number: the nextCursor of the previous page")
		}
		mq.Before = f
	}
	if v, ok := single(q["q"]); ok {
		mq.Q = v // read by core.ParseSearch, which bounds it
	}
	return mq, nil
}

// query reads r's query string whole: url.URL.Query drops a pair it
// cannot read (`min_score=9%`, `limit=1;x`), which would answer as if
// the filter had not been asked for.
func query(r *http.Request) (url.Values, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, core.Errorf(core.KindInvalidRequest, "the query string is malformed: %v", err)
	}
	return q, nil
}

// onlyOnce refuses a parameter of names given more than once: which of
// `limit=5&limit=50` the caller meant cannot be told, and reading the
// first would answer a question it did not ask.
func onlyOnce(q url.Values, names ...string) error {
	for _, n := range names {
		if len(q[n]) > 1 {
			return core.Errorf(core.KindInvalid, "%s is given %d times: send it once", n, len(q[n]))
		}
	}
	return nil
}

// single returns the one value of a query parameter; an empty value counts
// as given, so `limit=` is refused rather than read as the default.
func single(vs []string) (string, bool) {
	if len(vs) == 0 {
		return "", false
	}
	return vs[0], true
}

// decodeJSON reads one JSON object of at most limit bytes into v, the
// one body reader of every JSON route: malformed JSON is invalid_json; a
// field of the wrong type or an unknown field is invalid_parameter
// naming the field; a larger body is payload_too_large.
func decodeJSON(r *http.Request, v any, limit int) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(limit)+1))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return core.Errorf(core.KindPayloadTooLarge, "request body is over %d bytes", limit)
		}
		return core.Wrap(core.KindInvalidRequest, err, "could not read the request body")
	}
	if len(body) > limit {
		return core.Errorf(core.KindPayloadTooLarge, "request body is over %d bytes", limit)
	}
	t := bytes.TrimSpace(body)
	if len(t) == 0 {
		return core.Errorf(core.KindInvalidJSON, "request body must be a JSON object")
	}
	if !json.Valid(t) {
		return core.Errorf(core.KindInvalidJSON, "request body is not valid JSON")
	}
	if t[0] != '{' {
		return core.Errorf(core.KindInvalidJSON, "request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return typeError(te, v)
		}
		if name, ok := unknownMember(t, v); ok {
			return core.Errorf(core.KindInvalid, "unknown field %s", name)
		}
		return core.Errorf(core.KindInvalidJSON, "request body is not valid JSON")
	}
	return nil
}

// unknownMember returns the first member of the object body that no
// field of v takes. Short of a value of the wrong type, that is the one
// way a sound object fails to decode; encoding/json names the member only
// in its error's text, which go-json-experiment/json reports as a value:
// it decodes as encoding/json does (DefaultOptionsV1) and stops at the
// first unknown name. v is decoded into again, as the caller drops it.
func unknownMember(body []byte, v any) (string, bool) {
	err := jsonv2.Unmarshal(body, v, jsonv1.DefaultOptionsV1(), jsonv1.ReportErrorsWithLegacySemantics(false), jsonv2.RejectUnknownMembers(true))
	var se *jsonv2.SemanticError
	if errors.As(err, &se) && errors.Is(err, jsonv2.ErrUnknownName) {
		return se.JSONPointer.LastToken(), true
	}
	return "", false
}

// typeError names the member whose value has the wrong type, and the
// type its field declares: encoding/json names the member with the
// struct it is embedded in ("filtersBody.exclude") and, for an element
// of a list, the element's type, where the caller wants the list's.
func typeError(te *json.UnmarshalTypeError, v any) error {
	name := te.Field
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	typ := te.Type
	if f, ok := jsonField(reflect.TypeOf(v), name); ok {
		typ = f
	}
	return core.Errorf(core.KindInvalid, "%s must be of type %s", name, jsonType(typ))
}

// jsonField returns the type of the field of struct t (or a pointer to
// one) that takes the JSON member name, looking into embedded structs.
func jsonField(t reflect.Type, name string) (reflect.Type, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, false
	}
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case f.Anonymous && tag == "":
			if ft, ok := jsonField(f.Type, name); ok {
				return ft, true
			}
		case tag == name:
			return f.Type, true
		}
	}
	return nil, false
}

// jsonType names a field's type as JSON (and the OpenAPI document) do:
// a whole number is an integer, and no Go type name reaches a caller.
func jsonType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Bool:
		return "boolean"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.String {
			return "array of strings"
		}
		return "array"
	}
	return "object"
}
