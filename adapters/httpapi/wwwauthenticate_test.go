package httpapi

import (
	"net/http"
	"testing"
)

// A 401 names the scheme that would work in WWW-Authenticate, as RFC
// 9110 requires of every 401 and RFC 6750 of a Bearer resource, on both
// edges and for each way a key is refused; an answer to a valid key
// carries none.
func TestUnauthorizedNamesTheScheme(t *testing.T) {
	api := New(Config{Logger: quietLog}, Deps{Keys: readKeys, Phrases: &probe{}, Limiter: unlimited{}})
	helper := NewHelper(HelperConfig{Logger: quietLog}, helperKeys, &fakeIngest{}, &fakeSessions{})
	for _, c := range []struct {
		h            http.Handler
		path, auth   string
		status       int
		authenticate string
	}{
		{api, "/api/v1/me", "", 401, "Bearer"},
		{api, "/api/v1/me", "Basic dTpw", 401, "Bearer"},
		{api, "/api/v1/me", "Bearer svc_api_unknown", 401, "Bearer"},
		{api, "/api/v1/me", "Bearer svc_ingest_one", 401, "Bearer"},
		{api, "/api/v1/me", "Bearer svc_api_read", 200, ""},
		{helper, "/phrases?platform=x", "", 401, "Bearer"},
		{helper, "/phrases?platform=x", "Bearer svc_api_read", 401, "Bearer"},
		{helper, "/phrases?platform=x", "Bearer svc_ingest_one", 200, ""},
	} {
		rec := respond(c.h, "GET", c.path, c.auth, nil)
		if rec.Code != c.status || rec.Header().Get("WWW-Authenticate") != c.authenticate {
			t.Errorf("GET %s with %q: %d, WWW-Authenticate %q; want %d, %q", c.path, c.auth, rec.Code, rec.Header().Get("WWW-Authenticate"), c.status, c.authenticate)
		}
	}
}
