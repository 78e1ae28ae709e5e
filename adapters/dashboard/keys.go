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
	// RevokeAction is the address of the key's revoke form.
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
	// LiveAPI and LiveIngest are the live keys of each kind, MaxAPI and
	// MaxIngest how many the owner may hold; KeptRevoked is how many
	// revoked keys of each kind stay listed.
	LiveAPI, MaxAPI       int
	LiveIngest, MaxIngest int
	KeptRevoked           int
	Scopes                []scopeOption
	Form                  keyForm
	// IngestName is the ingest key's name as typed, shown back when the
	// key was refused.
	IngestName string
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

// keyKinds is how the keys page speaks of each kind of key: its name,
// the form field a refusal is shown beside, and where its revoke form
// posts, so a key of one kind is never revoked through the other's route.
var keyKinds = map[core.KeyKind]struct{ label, field, revoke string }{
	core.APIKey:    {"API", "name", "/app/keys/"},
	core.IngestKey: {"ingest", "ingest_name", "/app/ingest-keys/"},
}

func (d *Dashboard) keyView(k core.Key) keyView {
	v := keyView{ID: k.ID, Name: k.Name, Fingerprint: fingerprint(k), Revoked: k.Revoked(),
		Created: ago(d.cfg.Now(), k.CreatedAt), LastUsed: ago(d.cfg.Now(), k.LastUsedAt),
		RevokeAction: keyKinds[k.Kind].revoke + k.ID + "/revoke"}
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
	for _, kind := range []core.KeyKind{core.APIKey, core.IngestKey} {
		keys, err := d.deps.Keys.List(r.Context(), owner, kind)
		if err != nil {
			d.fail(w, r, err)
			return
		}
		views, live := &v.APIKeys, &v.LiveAPI
		if kind == core.IngestKey {
			views, live = &v.IngestKeys, &v.LiveIngest
		}
		for _, k := range keys {
			*views = append(*views, d.keyView(k))
			if !k.Revoked() {
				*live++
			}
		}
	}
	v.layout.Title, v.layout.Nav, v.layout.SignedIn = "Keys", "keys", true
	v.MaxAPI, v.MaxIngest, v.KeptRevoked = core.MaxAPIKeys, core.MaxIngestKeys, core.KeptRevokedKeys
	for _, s := range core.AllScopes {
		v.Scopes = append(v.Scopes, scopeOption{Value: string(s), Checked: s == core.ScopeRead || slices.Contains(v.Form.Scopes, s)})
	}
	d.render(w, r, status, "keys", &v)
}

func (d *Dashboard) showKeys(w http.ResponseWriter, r *http.Request) {
	d.renderKeys(w, r, http.StatusOK, keysView{layout: layout{Notice: doneNotice(r, "keys")}})
}

func (d *Dashboard) createAPIKey(w http.ResponseWriter, r *http.Request) {
	d.createKey(w, r, core.APIKey)
}

func (d *Dashboard) createIngestKey(w http.ResponseWriter, r *http.Request) {
	d.createKey(w, r, core.IngestKey)
}

// createKey shows the new key's secret in its answer, once. A refusal
// (a bad name, the kind's limit of live keys) is shown beside the name in the
// service's words, the same the API and the admin console give; an
// unknown scope beside the scopes.
func (d *Dashboard) createKey(w http.ResponseWriter, r *http.Request, kind core.KeyKind) {
	k := keyKinds[kind]
	form, err := readForm(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	f, err := parseKey(form, kind)
	field := "scope"
	var secret string
	if err == nil {
		field = k.field
		if kind == core.IngestKey {
			secret, _, err = d.deps.Keys.CreateIngestKey(r.Context(), session(r).OwnerID, f.Name)
		} else {
			secret, _, err = d.deps.Keys.CreateAPIKey(r.Context(), session(r).OwnerID, f.Name, f.Scopes)
		}
	}
	if err != nil {
		if statusOf(err) == http.StatusInternalServerError {
			d.fail(w, r, err)
			return
		}
		v := keysView{Errors: map[string]string{field: core.Message(err)}}
		if kind == core.APIKey {
			v.Form = f
		} else {
			v.IngestName = f.Name
		}
		v.Problem = "The key was not made: see below."
		d.renderKeys(w, r, statusOf(err), v)
		return
	}
	d.renderKeys(w, r, http.StatusOK, keysView{NewSecret: secret, NewKind: k.label, NewName: f.Name,
		layout: layout{Notice: "Key made. Copy it now: it is shown this once."}})
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
