package dashboard

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/earshothq/earshot/core"
)

// maxJarForm bounds the body of a cookie-jar upload: the largest jar
// accepted, with room for the multipart framing and the empty paste
// field. Every other form keeps maxForm.
const maxJarForm = core.MaxCookieJar + 16<<10

// helperKeyFile is where the accounts page tells an owner to keep the
// helper's ingest key: a file, so the key never lands in shell history.
const helperKeyFile = "~/.config/earshot/helper.key"

// helperDocs is the helper's page in the repository.
const helperDocs = "https://github.com/earshothq/earshot/blob/main/docs/helper.md"

// helperView is the "Run a helper" panel of the accounts page.
type helperView struct {
	Command string // the command for this deployment
	SaveKey string // the command that stores a key in helperKeyFile
	Docs    string
	// Secret is the ingest key just made, shown on this answer only.
	Secret  string
	Problem string
	// LiveKeys counts the owner's ingest keys not revoked; LastUsed is
	// when any of them was last used.
	LiveKeys    int
	LastUsed    string
	LastUsedISO string
	// Keys is false when the dashboard has no key service.
	Keys bool
}

// helperCommand is the command that runs a helper against this
// deployment, reading its key from helperKeyFile.
func (d *Dashboard) helperCommand() string {
	site := ""
	if d.cfg.SiteURL != nil {
		site = strings.TrimRight(d.cfg.SiteURL(), "/")
	}
	if site == "" {
		site = "https://your-earshot.example"
	}
	return "EARSHOT_HELPER_SERVER=" + shellWord(site) + " EARSHOT_HELPER_KEY_FILE=" + helperKeyFile + " earshot helper"
}

// shellWord quotes s for a POSIX shell unless it is made of characters a
// shell takes literally.
func shellWord(s string) string {
	plain := s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(":/._-@%+=,", r))
	})
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// helperPanel fills the panel: the command and how the owner's ingest
// keys were last used.
func (d *Dashboard) helperPanel(r *http.Request, h *helperView) error {
	h.Command, h.Docs = d.helperCommand(), helperDocs
	h.SaveKey = "mkdir -p ~/.config/earshot && (umask 077; cat > " + helperKeyFile + ")"
	if d.deps.Keys == nil {
		return nil
	}
	h.Keys = true
	keys, err := d.deps.Keys.List(r.Context(), session(r).OwnerID, core.IngestKey)
	if err != nil {
		return err
	}
	var last core.Key
	for _, k := range keys {
		if k.Revoked() {
			continue
		}
		h.LiveKeys++
		if k.LastUsedAt.After(last.LastUsedAt) {
			last = k
		}
	}
	h.LastUsed = ago(d.cfg.Now(), last.LastUsedAt)
	if !last.LastUsedAt.IsZero() {
		h.LastUsedISO = last.LastUsedAt.UTC().Format(time.RFC3339)
	}
	return nil
}

// createHelperKey makes an ingest key named "helper" and shows it on the
// accounts page, once, as the keys page does.
func (d *Dashboard) createHelperKey(w http.ResponseWriter, r *http.Request) {
	if d.deps.Keys == nil {
		d.notFound(w, r)
		return
	}
	secret, _, err := d.deps.Keys.CreateIngestKey(r.Context(), session(r).OwnerID, "helper")
	if err != nil {
		if statusOf(err) == http.StatusInternalServerError {
			d.fail(w, r, err)
			return
		}
		v := accountsView{}
		v.Helper.Problem = core.Message(err)
		v.Problem = "The key was not made: see Run a helper."
		d.renderAccounts(w, r, statusOf(err), v)
		return
	}
	v := accountsView{layout: layout{Notice: "Ingest key made. Copy it now: it is shown this once."}}
	v.Helper.Secret = secret
	d.renderAccounts(w, r, http.StatusOK, v)
}

// uploadJar connects the platform's account with an uploaded cookie jar,
// or replaces its jar. A refusal is shown on the platform's card in the
// service's words, which never quote a cookie; success says how many
// cookies were kept, never their values.
func (d *Dashboard) uploadJar(w http.ResponseWriter, r *http.Request) {
	p, err := core.ParsePlatform("platform", r.PathValue("platform"))
	if err != nil || d.deps.Jars == nil {
		d.notFound(w, r)
		return
	}
	jar, err := readJarForm(r)
	if err == nil {
		var kept int
		if _, kept, err = d.deps.Jars.SetSession(r.Context(), session(r).OwnerID, string(p), jar); err == nil {
			cookies := "cookies"
			if kept == 1 {
				cookies = "cookie"
			}
			v := accountsView{layout: layout{Notice: fmt.Sprintf("%s connected: %d %s kept from the upload. A helper reads with them from its next pass.",
				p, kept, cookies)}}
			d.renderAccounts(w, r, http.StatusOK, v)
			return
		}
	}
	if statusOf(err) == http.StatusInternalServerError {
		d.fail(w, r, err)
		return
	}
	v := accountsView{JarErrors: map[string]string{string(p): core.Message(err)}}
	v.Problem = "The cookies of " + string(p) + " were not stored: see below."
	d.renderAccounts(w, r, statusOf(err), v)
}

// readJarForm returns the uploaded file, or else the pasted text. It
// reads at most one byte past the largest jar, so the service refuses a
// larger one by its size.
func readJarForm(r *http.Request) ([]byte, error) {
	err := r.ParseMultipartForm(maxJarForm)
	if errors.Is(err, http.ErrNotMultipart) {
		err = r.ParseForm()
	}
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, core.Errorf(core.KindInvalid, "the upload is larger than %d KB", core.MaxCookieJar>>10)
		}
		return nil, core.Errorf(core.KindInvalid, "the form could not be read")
	}
	if r.MultipartForm != nil {
		defer r.MultipartForm.RemoveAll()
	}
	f, _, err := r.FormFile("file")
	switch {
	case err == nil:
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, core.MaxCookieJar+1))
		if err != nil {
			return nil, core.Errorf(core.KindInvalid, "the file could not be read")
		}
		if len(b) > 0 {
			return b, nil
		}
	case !errors.Is(err, http.ErrMissingFile) && !errors.Is(err, http.ErrNotMultipart):
		return nil, core.Errorf(core.KindInvalid, "the file could not be read")
	}
	if paste := r.PostFormValue("paste"); strings.TrimSpace(paste) != "" {
		return []byte(paste), nil
	}
	return nil, core.Errorf(core.KindInvalid, "choose the exported cookie file, or paste its contents")
}
