package reddit

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/earshothq/earshot/redditjson"
)

// tokenEarly is how long before its stated expiry a token is replaced, so
// a request never leaves with a token that lapses on the way.
const tokenEarly = 60 * time.Second

// tokens gets and caches an application-only OAuth token (the
// client_credentials grant: no reddit user involved, read access to public
// data at the OAuth rate limit). The token and the secret stay in here:
// neither is ever logged or put in an error.
type tokens struct {
	url            string
	id, secret, ua string
	client         *http.Client
	now            func() time.Time

	mu      sync.Mutex // held across a fetch, so concurrent reads fetch once
	token   string
	expires time.Time
}

// get returns a valid token, fetching one when none is cached or the cached
// one is about to expire.
func (t *tokens) get(ctx context.Context) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.token != "" && t.now().Before(t.expires) {
		return t.token, nil
	}
	t.token = ""
	token, lifetime, err := t.fetch(ctx)
	if err != nil {
		return "", err
	}
	t.token, t.expires = token, t.now().Add(lifetime)
	return token, nil
}

// drop forgets token after reddit refused it (401), so the next get fetches
// a fresh one. A token replaced meanwhile by another read is kept.
func (t *tokens) drop(token string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.token == token {
		t.token = ""
	}
}

func (t *tokens) fetch(ctx context.Context) (string, time.Duration, error) {
	form := url.Values{"grant_type": {"client_credentials"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, &failure{reason: "token request could not be built"}
	}
	req.SetBasicAuth(t.id, t.secret)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", t.ua)
	resp, err := t.client.Do(req)
	if err != nil {
		return "", 0, transportFailure("token", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return "", 0, transportFailure("token", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", 0, &failure{reason: fmt.Sprintf("token http %d", resp.StatusCode)}
	}
	// Reddit answers a bad grant with 200 and {"error": "..."}; only a
	// non-empty access_token counts.
	var tok struct {
		AccessToken string            `json:"access_token"`
		TokenType   string            `json:"token_type"`
		ExpiresIn   redditjson.Number `json:"expires_in"`
	}
	if err := json.Unmarshal(body, &tok); err != nil || tok.AccessToken == "" {
		return "", 0, &failure{reason: "token answer has no access token"}
	}
	// A token no header can carry (a line break, a control character)
	// would fail every read as a transport error for as long as it is
	// cached.
	if !httpguts.ValidHeaderFieldValue(tok.AccessToken) {
		return "", 0, &failure{reason: "token answer has an access token no request can carry"}
	}
	if tok.TokenType != "" && !strings.EqualFold(tok.TokenType, "bearer") {
		return "", 0, &failure{reason: "token is not a bearer token"}
	}
	life := time.Duration(float64(tok.ExpiresIn) * float64(time.Second))
	if life <= 0 || life > 30*24*time.Hour {
		life = time.Hour // reddit states 24 h; an odd answer gets a safe guess
	}
	if early := life - tokenEarly; early >= life/2 {
		life = early
	} else {
		life /= 2
	}
	return tok.AccessToken, life, nil
}
