package dashboard

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/earshothq/earshot/core"
)

// keyView is a key as the keys page lists it: never its secret.
type keyView struct {
	ID          string
	Name        string
	Scopes      string
	Fingerprint string
	Created     string
	CreatedISO  string
	LastUsed    string
	LastUsedISO string
	Revoked     bool
	RevokedAt   string
	// RevokeAction is the form's address, by kind: a key of one kind is
	// never revoked through the other's route.
	RevokeAction string
}

// scopeOption is one scope checkbox of the create form.
type scopeOption struct {
	Value   string
	Checked bool
}

type keysView struct {
	layout
	APIKeys    []keyView
	IngestKeys []keyView
	LiveAPI    int
	MaxAPI     int
	Scopes     []scopeOption
	Form       keyForm
	Errors     map[string]string // field -> message
	// NewSecret is the secret of the key just made, shown on this answer
	// only: it is not stored and no later page can show it.
	NewSecret string
	NewKind   string // "API" or "ingest"
	NewName   string
}

// fingerprint names a key without revealing it: the start of the SHA-256
// the store keeps, which the secret cannot be got back from.
func fingerprint(k core.Key) string {
	if len(k.Hash) < 12 {
		return ""
	}
	return k.Hash[:4] + "…" + k.Hash[len(k.Hash)-4:]
}

func (d *Dashboard) keyView(k core.Key) keyView {
	v := keyView{ID: k.ID, Name: k.Name, Fingerprint: fingerprint(k), Revoked: k.Revoked(),
		Created: ago(d.cfg.Now(), k.CreatedAt), LastUsed: ago(d.cfg.Now(), k.LastUsedAt)}
	if v.Name == "" {
		v.Name = "(no name)"
	}
	sc := make([]string, 0, len(k.Scopes)+1)
	if !slices.Contains(k.Scopes, core.ScopeRead) {
		sc = append(sc, string(core.ScopeRead))
	}
	for _, s := range k.Scopes {
		sc = append(sc, string(s))
	}
	v.Scopes = strings.Join(sc, ", ")
	if k.Kind == core.IngestKey {
		v.Scopes = "ingest, account status" // ingest keys have no API scopes
	}
	if !k.CreatedAt.IsZero() {
		v.CreatedISO = k.CreatedAt.UTC().Format(time.RFC3339)
	}
	if !k.LastUsedAt.IsZero() {
		v.LastUsedISO = k.LastUsedAt.UTC().Format(time.RFC3339)
	}
	if k.Revoked() {
		v.RevokedAt = ago(d.cfg.Now(), k.RevokedAt)
	}
	return v
}

// renderKeys shows both key lists and the create forms; v carries what
// the request adds (an error, a new secret).
func (d *Dashboard) renderKeys(w http.ResponseWriter, r *http.Request, status int, v keysView) {
	owner := session(r).OwnerID
	api, err := d.deps.Keys.List(r.Context(), owner, core.APIKey)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	ingest, err := d.deps.Keys.List(r.Context(), owner, core.IngestKey)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v.layout.Title, v.layout.Nav, v.layout.SignedIn = "Keys", "keys", true
	v.MaxAPI = core.MaxAPIKeys
	for _, k := range api {
		kv := d.keyView(k)
		kv.RevokeAction = "/app/keys/" + k.ID + "/revoke"
		v.APIKeys = append(v.APIKeys, kv)
		if !k.Revoked() {
			v.LiveAPI++
		}
	}
	for _, k := range ingest {
		kv := d.keyView(k)
		kv.RevokeAction = "/app/ingest-keys/" + k.ID + "/revoke"
		v.IngestKeys = append(v.IngestKeys, kv)
	}
	for _, s := range core.AllScopes {
		v.Scopes = append(v.Scopes, scopeOption{Value: string(s), Checked: s == core.ScopeRead || slices.Contains(v.Form.Scopes, s)})
	}
	d.render(w, r, status, "keys", &v)
}

func (d *Dashboard) showKeys(w http.ResponseWriter, r *http.Request) {
	v := keysView{}
	switch r.URL.Query().Get("done") {
	case "revoked":
		v.Notice = "Key revoked: requests with it are refused from now on."
	}
	d.renderKeys(w, r, http.StatusOK, v)
}

// createAPIKey shows the new key's secret in its answer, once.
func (d *Dashboard) createAPIKey(w http.ResponseWriter, r *http.Request) {
	f, err := parseKey(r)
	var secret string
	if err == nil {
		secret, _, err = d.deps.Keys.CreateAPIKey(r.Context(), session(r).OwnerID, f.Name, f.Scopes)
	}
	if err != nil {
		if statusOf(err) == http.StatusInternalServerError {
			d.fail(w, r, err)
			return
		}
		field := "name"
		if strings.Contains(core.Message(err), "scope") {
			field = "scope"
		}
		v := keysView{Form: f, Errors: map[string]string{field: core.Message(err)}}
		v.Problem = "The key was not made: see below."
		d.renderKeys(w, r, statusOf(err), v)
		return
	}
	d.renderKeys(w, r, http.StatusOK, keysView{NewSecret: secret, NewKind: "API", NewName: f.Name,
		layout: layout{Notice: "Key made. Copy it now: it is shown this once."}})
}

func (d *Dashboard) createIngestKey(w http.ResponseWriter, r *http.Request) {
	f, err := parseKey(r)
	var secret string
	if err == nil {
		secret, _, err = d.deps.Keys.CreateIngestKey(r.Context(), session(r).OwnerID, f.Name)
	}
	if err != nil {
		if statusOf(err) == http.StatusInternalServerError {
			d.fail(w, r, err)
			return
		}
		v := keysView{Errors: map[string]string{"ingest_name": core.Message(err)}}
		v.Problem = "The key was not made: see below."
		d.renderKeys(w, r, statusOf(err), v)
		return
	}
	d.renderKeys(w, r, http.StatusOK, keysView{NewSecret: secret, NewKind: "ingest", NewName: f.Name,
		layout: layout{Notice: "Ingest key made. Copy it now: it is shown this once."}})
}

func (d *Dashboard) revokeAPIKey(w http.ResponseWriter, r *http.Request) {
	d.revokeKey(w, r, core.APIKey)
}

func (d *Dashboard) revokeIngestKey(w http.ResponseWriter, r *http.Request) {
	d.revokeKey(w, r, core.IngestKey)
}

func (d *Dashboard) revokeKey(w http.ResponseWriter, r *http.Request, kind core.KeyKind) {
	if err := d.deps.Keys.RevokeOfKind(r.Context(), session(r).OwnerID, kind, r.PathValue("id")); err != nil {
		d.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/app/keys?done=revoked", http.StatusSeeOther)
}
