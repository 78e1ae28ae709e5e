package legacymock

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/earshothq/earshot/core"
)

// The brand is kept as a JSON object because the spec leaves most of its
// field types open; validBrand pins down the parts it does name.

var (
	errInvalidBrand = core.Errorf(core.KindInvalid, "Invalid brand payload")
	errNoBrand      = core.Errorf(core.KindNotFound, "No brand yet")
)

// brandObjects are the sections deep-merged as objects by PUT /brand.
var brandObjects = map[string]bool{"identity": true, "location": true, "voice": true, "channels": true, "memory": true, "intelligence": true}

var (
	voiceFormality = []string{"casual", "friendly", "neutral", "professional", "formal"}
	pageStatuses   = []string{"indexed", "pending", "failed"}
	channelKeys    = []string{"facebook", "x", "reddit"}
)

func (s *Server) getBrand(context.Context, any) (any, error) {
	return s.store.read(func(st *state) (result, error) {
		return ok(map[string]any{"brand": st.Brand}), nil
	})
}

var decodePutBrand = decodeBody[map[string]any]

// putBrand creates the brand or deep-merges a partial one into it:
// sections merge key by key (null removes a key), arrays other than
// sources replace, offerings are filtered to valid ones, sources merge by
// URL. Unknown top-level keys are ignored; updatedAt is the server's.
func (s *Server) putBrand(_ context.Context, request any) (any, error) {
	patch := request.(map[string]any)
	return s.store.write(func(st *state) (result, error) {
		next := map[string]any{}
		if st.Brand != nil {
			next = deepCopy(st.Brand).(map[string]any)
		}
		for key, v := range patch {
			switch {
			case brandObjects[key] && v == nil, v == nil && (key == "sourceUrl" || key == "offerings" || key == "sources"):
				delete(next, key)
			case brandObjects[key]:
				src, isObj := v.(map[string]any)
				if !isObj {
					return result{}, errInvalidBrand
				}
				dst, _ := next[key].(map[string]any)
				if dst == nil {
					dst = map[string]any{}
				}
				deepMerge(dst, src)
				next[key] = dst
			case key == "offerings":
				list, isList := v.([]any)
				if !isList {
					return result{}, errInvalidBrand
				}
				next[key] = validOfferings(list)
			case key == "sources":
				list, isList := v.([]any)
				if !isList {
					return result{}, errInvalidBrand
				}
				merged, valid := mergePages(next["sources"], list)
				if !valid {
					return result{}, errInvalidBrand
				}
				next[key] = merged
			case key == "sourceUrl":
				next[key] = v
			}
		}
		if !validBrand(next) {
			return result{}, errInvalidBrand
		}
		next["updatedAt"] = s.store.stamp()
		st.Brand = next
		return ok(map[string]any{"brand": st.Brand}), nil
	})
}

func (s *Server) deleteBrand(context.Context, any) (any, error) {
	return s.store.write(func(st *state) (result, error) {
		st.Brand = nil
		return ok(map[string]any{"brand": nil}), nil
	})
}

type intelligenceRequest struct {
	Competitors       []string         `json:"competitors"`
	TargetCommunities []map[string]any `json:"targetCommunities"`
	SelectedKeyword   optional[string] `json:"selectedKeyword"`
}

var decodeBrandIntelligence = decodeBody[intelligenceRequest]

// brandIntelligence adds competitors (deduplicated by trimmed exact text),
// merges community picks by id and overwrites selectedKeyword when given.
func (s *Server) brandIntelligence(_ context.Context, request any) (any, error) {
	req := request.(intelligenceRequest)
	for _, c := range req.TargetCommunities {
		if id, _ := c["id"].(string); strings.TrimSpace(id) == "" {
			return nil, core.Errorf(core.KindInvalid, "every targetCommunities entry needs a string id")
		}
	}
	return s.store.write(func(st *state) (result, error) {
		if st.Brand == nil {
			return result{}, errNoBrand
		}
		intel, _ := st.Brand["intelligence"].(map[string]any)
		if intel == nil {
			intel = map[string]any{}
		}
		competitors := []any{}
		seen := map[string]bool{}
		old, _ := intel["competitors"].([]any)
		// Stored names are compared trimmed too: a PUT keeps them as given.
		for _, c := range old {
			if name, isStr := c.(string); isStr && !seen[strings.TrimSpace(name)] {
				seen[strings.TrimSpace(name)] = true
				competitors = append(competitors, name)
			}
		}
		for _, name := range req.Competitors {
			if name = strings.TrimSpace(name); name != "" && !seen[name] {
				seen[name] = true
				competitors = append(competitors, name)
			}
		}
		intel["competitors"] = competitors

		picks, _ := intel["targetCommunities"].([]any)
		for _, in := range req.TargetCommunities {
			id, _ := in["id"].(string)
			merged := false
			for _, p := range picks {
				if pm, isObj := p.(map[string]any); isObj && pm["id"] == id {
					deepMerge(pm, deepCopy(in).(map[string]any))
					merged = true
					break
				}
			}
			if !merged {
				picks = append(picks, deepCopy(in))
			}
		}
		if picks == nil {
			picks = []any{}
		}
		intel["targetCommunities"] = picks

		switch {
		case req.SelectedKeyword.Set && req.SelectedKeyword.Null:
			delete(intel, "selectedKeyword")
		case req.SelectedKeyword.Set:
			intel["selectedKeyword"] = req.SelectedKeyword.Value
		}
		st.Brand["intelligence"] = intel
		st.Brand["updatedAt"] = s.store.stamp()
		return ok(map[string]any{"brand": st.Brand}), nil
	})
}

func brandSources(b map[string]any) []any {
	if src, isList := b["sources"].([]any); isList {
		return src
	}
	return []any{}
}

func (s *Server) listBrandSources(context.Context, any) (any, error) {
	return s.store.read(func(st *state) (result, error) {
		return ok(map[string]any{"sources": brandSources(st.Brand)}), nil
	})
}

type deleteSourceRequest struct {
	URL string `json:"url"`
}

var decodeDeleteBrandSource = decodeBody[deleteSourceRequest]

// deleteBrandSource removes the page with exactly that URL; an unknown URL
// changes nothing but still stamps updatedAt, as every mutating brand
// route does.
func (s *Server) deleteBrandSource(_ context.Context, request any) (any, error) {
	req := request.(deleteSourceRequest)
	if req.URL == "" {
		return nil, core.Errorf(core.KindInvalid, "url is required")
	}
	return s.store.write(func(st *state) (result, error) {
		if st.Brand == nil {
			return result{}, errNoBrand
		}
		kept := []any{}
		for _, p := range brandSources(st.Brand) {
			if pm, isObj := p.(map[string]any); isObj && pm["url"] == req.URL {
				continue
			}
			kept = append(kept, p)
		}
		st.Brand["sources"] = kept
		st.Brand["updatedAt"] = s.store.stamp()
		return ok(map[string]any{"brand": st.Brand, "sources": kept}), nil
	})
}

type indexRequest struct {
	URLs    []string `json:"urls"`
	Sitemap bool     `json:"sitemap"`
}

func decodeIndexBrand(_ context.Context, r *http.Request) (any, error) {
	var req indexRequest
	return req, decodeJSON(r, &req, true)
}

// indexBrand queues the given URLs as pending pages, and, without URLs or
// with sitemap true, re-resolves the brand website into its pages. The
// mock never touches the network: the pages are derived from the website
// address (home, about, pricing, contact) and marked indexed.
func (s *Server) indexBrand(_ context.Context, request any) (any, error) {
	req := request.(indexRequest)
	for _, u := range req.URLs {
		if _, valid := httpURL(u); !valid {
			return nil, core.Errorf(core.KindInvalid, "urls must be http or https addresses: %q is not", u)
		}
	}
	return s.store.write(func(st *state) (result, error) {
		if st.Brand == nil {
			return result{}, errNoBrand
		}
		sources := brandSources(st.Brand)
		now := s.store.stamp()
		for _, raw := range req.URLs {
			u, _ := httpURL(raw)
			if pageIndex(sources, u) < 0 {
				sources = append(sources, newPage(u, "pending", nil))
			}
		}
		if len(req.URLs) == 0 || req.Sitemap {
			site, found := brandWebsite(st.Brand)
			if !found {
				return result{}, core.Errorf(core.KindInvalid, "The brand has no website to index: set identity.website or sourceUrl")
			}
			for _, p := range sitePages(st.Brand, site, now) {
				if i := pageIndex(sources, p["url"].(string)); i >= 0 {
					sources[i] = p
				} else {
					sources = append(sources, p)
				}
			}
		}
		st.Brand["sources"] = sources
		st.Brand["updatedAt"] = now
		return ok(map[string]any{"brand": st.Brand, "sources": sources}), nil
	})
}

// httpURL checks that s is an absolute http or https address.
func httpURL(s string) (string, bool) {
	s = strings.TrimSpace(s)
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	return s, true
}

func brandWebsite(b map[string]any) (*url.URL, bool) {
	id, _ := b["identity"].(map[string]any)
	for _, v := range []any{id["website"], b["sourceUrl"]} {
		if s, isStr := v.(string); isStr {
			if _, valid := httpURL(s); valid {
				u, _ := url.Parse(strings.TrimSpace(s))
				return u, true
			}
		}
	}
	return nil, false
}

func pageIndex(pages []any, u string) int {
	for i, p := range pages {
		if pm, isObj := p.(map[string]any); isObj && pm["url"] == u {
			return i
		}
	}
	return -1
}

func newPage(u, status string, fetchedAt any) map[string]any {
	return map[string]any{"url": u, "title": "", "headings": []any{}, "text": "", "status": status, "fetchedAt": fetchedAt}
}

// sitePages derives the pages a small business site has, worded from the
// brand's own identity, offerings and location.
func sitePages(b map[string]any, site *url.URL, now string) []map[string]any {
	origin := site.Scheme + "://" + site.Host
	id, _ := b["identity"].(map[string]any)
	name, _ := id["name"].(string)
	if name == "" {
		name = site.Hostname()
	}
	about, _ := id["description"].(string)
	if about == "" {
		about = name + " is a small, independent team serving its customers directly."
	}
	var offers []string
	list, _ := b["offerings"].([]any)
	for _, o := range list {
		if om, isObj := o.(map[string]any); isObj {
			if n, _ := om["name"].(string); n != "" {
				offers = append(offers, n)
			}
		}
	}
	pricing := "Plans and prices for everything " + name + " offers."
	if len(offers) > 0 {
		pricing = "Prices for " + strings.Join(offers, ", ") + "."
	}
	loc, _ := b["location"].(map[string]any)
	city, _ := loc["city"].(string)
	contact := "Write to " + name + " through the contact form; the team answers within one working day."
	if city != "" {
		contact = "Visit or call " + name + " in " + city + "; the team answers within one working day."
	}
	mk := func(path, title, text string, headings ...string) map[string]any {
		h := make([]any, len(headings))
		for i, x := range headings {
			h[i] = x
		}
		return map[string]any{"url": origin + path, "title": title, "headings": h, "text": text, "status": "indexed", "fetchedAt": now}
	}
	return []map[string]any{
		mk("/", name, about, name, "What we do", "Why customers choose us"),
		mk("/about", "About "+name, about, "About us", "Our story", "The team"),
		mk("/pricing", "Pricing | "+name, pricing, "Pricing", "Plans", "Frequently asked questions"),
		mk("/contact", "Contact "+name, contact, "Contact us", "Opening hours", "Find us"),
	}
}

// validOfferings keeps the offerings that are objects with a name.
func validOfferings(in []any) []any {
	out := []any{}
	for _, o := range in {
		om, isObj := o.(map[string]any)
		if !isObj {
			continue
		}
		if n, _ := om["name"].(string); strings.TrimSpace(n) == "" {
			continue
		}
		out = append(out, deepCopy(om))
	}
	return out
}

// mergePages merges incoming pages into the current list by URL; a page
// without an http(s) url makes the payload invalid.
func mergePages(cur any, in []any) ([]any, bool) {
	pages, _ := deepCopy(cur).([]any)
	if pages == nil {
		pages = []any{}
	}
	for _, p := range in {
		pm, isObj := p.(map[string]any)
		if !isObj {
			return nil, false
		}
		u, _ := pm["url"].(string)
		if _, valid := httpURL(u); !valid || u != strings.TrimSpace(u) {
			return nil, false
		}
		if i := pageIndex(pages, u); i >= 0 {
			deepMerge(pages[i].(map[string]any), deepCopy(pm).(map[string]any))
			continue
		}
		page := newPage(u, "pending", nil)
		deepMerge(page, deepCopy(pm).(map[string]any))
		pages = append(pages, page)
	}
	return pages, true
}

// validBrand checks a merged brand: an identity with a name, the named
// fields of the spec with their types, and well-formed URLs.
func validBrand(b map[string]any) bool {
	id, isObj := b["identity"].(map[string]any)
	if !isObj {
		return false
	}
	if name, _ := id["name"].(string); strings.TrimSpace(name) == "" {
		return false
	}
	if !optionalURL(id["website"]) || !optionalURL(b["sourceUrl"]) {
		return false
	}
	for _, key := range []string{"location", "voice", "channels", "memory", "intelligence"} {
		if v, set := b[key]; set {
			if _, isObj := v.(map[string]any); !isObj {
				return false
			}
		}
	}
	if voice, _ := b["voice"].(map[string]any); voice != nil {
		if f, set := voice["formality"]; set {
			if s, isStr := f.(string); !isStr || !oneOf(s, voiceFormality) {
				return false
			}
		}
		if !stringList(voice, "dos") || !stringList(voice, "donts") || !stringList(voice, "examples") {
			return false
		}
	}
	if ch, _ := b["channels"].(map[string]any); ch != nil {
		for k, v := range ch {
			if _, isObj := v.(map[string]any); !oneOf(k, channelKeys) || !isObj {
				return false
			}
		}
	}
	if mem, _ := b["memory"].(map[string]any); mem != nil && !stringList(mem, "rules") {
		return false
	}
	if in, _ := b["intelligence"].(map[string]any); in != nil {
		if !stringList(in, "competitors") {
			return false
		}
		if kw, set := in["selectedKeyword"]; set {
			if _, isStr := kw.(string); !isStr {
				return false
			}
		}
		if tc, set := in["targetCommunities"]; set {
			list, isList := tc.([]any)
			if !isList {
				return false
			}
			for _, c := range list {
				cm, isObj := c.(map[string]any)
				if !isObj {
					return false
				}
				if cid, _ := cm["id"].(string); cid == "" {
					return false
				}
			}
		}
	}
	if of, set := b["offerings"]; set {
		if _, isList := of.([]any); !isList {
			return false
		}
	}
	if src, set := b["sources"]; set {
		list, isList := src.([]any)
		if !isList {
			return false
		}
		for _, p := range list {
			if !validPage(p) {
				return false
			}
		}
	}
	return true
}

func validPage(p any) bool {
	pm, isObj := p.(map[string]any)
	if !isObj {
		return false
	}
	if u, _ := pm["url"].(string); u == "" {
		return false
	}
	if s, isStr := pm["status"].(string); !isStr || !oneOf(s, pageStatuses) {
		return false
	}
	if _, isStr := pm["title"].(string); !isStr {
		return false
	}
	if _, isStr := pm["text"].(string); !isStr {
		return false
	}
	if !stringList(pm, "headings") {
		return false
	}
	switch pm["fetchedAt"].(type) {
	case nil, string:
		return true
	}
	return false
}

func optionalURL(v any) bool {
	switch s := v.(type) {
	case nil:
		return true
	case string:
		if s == "" {
			return true
		}
		_, valid := httpURL(s)
		return valid
	}
	return false
}

// stringList reports whether m[key] is absent or an array of strings.
func stringList(m map[string]any, key string) bool {
	v, set := m[key]
	if !set {
		return true
	}
	list, isList := v.([]any)
	if !isList {
		return false
	}
	for _, x := range list {
		if _, isStr := x.(string); !isStr {
			return false
		}
	}
	return true
}

// deepMerge merges src into dst: objects merge recursively, null removes
// the key, anything else replaces.
func deepMerge(dst, src map[string]any) {
	for k, v := range src {
		if v == nil {
			delete(dst, k)
			continue
		}
		if sm, isObj := v.(map[string]any); isObj {
			if dm, isObj := dst[k].(map[string]any); isObj {
				deepMerge(dm, sm)
				continue
			}
		}
		dst[k] = deepCopy(v)
	}
}

// deepCopy copies a decoded JSON value so no two records share a map or a
// slice.
func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		l := make([]any, len(t))
		for i, x := range t {
			l[i] = deepCopy(x)
		}
		return l
	}
	return v
}
