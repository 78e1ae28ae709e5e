package dashboard

import (
	"net/http"
	"strconv"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

type phraseView struct {
	ID          string
	Phrase      string
	Platform    string
	Community   string
	Listening   bool
	Matches     int
	LastChecked string
	CheckedISO  string
	LastSource  string
	// Waiting: no helper has read this x or facebook phrase yet, so the
	// page says so rather than the check its creation stamped.
	Waiting bool
}

type phrasesView struct {
	layout
	Phrases   []phraseView
	Form      phraseForm
	Platforms []option
	Errors    map[string]string // field -> message
	Waiting   bool              // a phrase waits for a helper's first read
}

type deleteView struct {
	layout
	Phrase phraseView
}

func (d *Dashboard) phraseView(p core.Phrase) phraseView {
	v := phraseView{ID: p.ID, Phrase: p.Phrase, Platform: string(p.Platform), Community: p.Community,
		Listening: p.Status == core.Listening, Matches: p.Matches, LastSource: string(p.LastSource),
		LastChecked: ago(d.cfg.Now(), p.LastCheckedAt)}
	if awaitsHelper(p) {
		v.Waiting, v.LastChecked, v.LastSource = true, "never", ""
		return v
	}
	if !p.LastCheckedAt.IsZero() {
		v.CheckedISO = p.LastCheckedAt.UTC().Format("2006-01-02T15:04:05Z")
	}
	return v
}

// awaitsHelper reports whether p is read by helpers and none has read it
// yet: a new phrase is stamped as checked at its creation, from the
// source that reads its platform (docs/decisions.md), and only a
// helper's read moves lastCheckedAt past createdAt.
func awaitsHelper(p core.Phrase) bool {
	return p.Platform != core.Reddit && !p.LastCheckedAt.After(p.CreatedAt)
}

// renderPhrases shows the phrase list and the add form, with f and errs
// when a submission failed.
func (d *Dashboard) renderPhrases(w http.ResponseWriter, r *http.Request, status int, f phraseForm, errs map[string]string, notice string) {
	ps, err := d.deps.Phrases.List(r.Context(), session(r).OwnerID, ports.PhraseFilter{})
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v := phrasesView{layout: layout{Title: "Phrases", Nav: "phrases", SignedIn: true, Notice: notice}, Form: f, Errors: errs}
	if len(errs) > 0 {
		v.Problem = "The phrase was not added: see below."
	}
	for _, p := range ps {
		pv := d.phraseView(p)
		v.Waiting = v.Waiting || (pv.Waiting && pv.Listening)
		v.Phrases = append(v.Phrases, pv)
	}
	if f.Platform == "" {
		f.Platform = string(core.Reddit)
	}
	for _, p := range core.Platforms {
		v.Platforms = append(v.Platforms, option{Value: string(p), Label: string(p), Selected: string(p) == f.Platform})
	}
	d.render(w, r, status, "phrases", &v)
}

func (d *Dashboard) showPhrases(w http.ResponseWriter, r *http.Request) {
	d.renderPhrases(w, r, http.StatusOK, phraseForm{}, nil, doneNotice(r, "phrases"))
}

// addPhrase goes through the same service, validation and plan limits
// as POST /keywords; a refusal is shown beside the field it is about.
func (d *Dashboard) addPhrase(w http.ResponseWriter, r *http.Request) {
	form, err := readForm(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	f := parsePhrase(form)
	if _, _, err := d.deps.Phrases.Add(r.Context(), session(r).OwnerID, f.Phrase, f.Platform, f.Community, ""); err != nil {
		if statusOf(err) == http.StatusInternalServerError {
			d.fail(w, r, err)
			return
		}
		d.renderPhrases(w, r, statusOf(err), f, map[string]string{f.field(err): core.Message(err)}, "")
		return
	}
	http.Redirect(w, r, "/app/phrases?done=added", http.StatusSeeOther)
}

func (d *Dashboard) pausePhrase(w http.ResponseWriter, r *http.Request) {
	d.setPhraseStatus(w, r, core.Paused, "paused")
}

func (d *Dashboard) resumePhrase(w http.ResponseWriter, r *http.Request) {
	d.setPhraseStatus(w, r, core.Listening, "resumed")
}

func (d *Dashboard) setPhraseStatus(w http.ResponseWriter, r *http.Request, s core.PhraseStatus, done string) {
	if _, err := d.deps.Phrases.SetStatus(r.Context(), session(r).OwnerID, r.PathValue("id"), string(s)); err != nil {
		d.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/app/phrases?done="+done, http.StatusSeeOther)
}

// confirmDeletePhrase asks before deleting, saying what goes with it.
func (d *Dashboard) confirmDeletePhrase(w http.ResponseWriter, r *http.Request) {
	p, err := d.deps.Phrases.Get(r.Context(), session(r).OwnerID, r.PathValue("id"))
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.render(w, r, http.StatusOK, "delete", &deleteView{layout: layout{Title: "Delete " + strconv.Quote(p.Phrase), Nav: "phrases", SignedIn: true},
		Phrase: d.phraseView(p)})
}

func (d *Dashboard) deletePhrase(w http.ResponseWriter, r *http.Request) {
	if err := d.deps.Phrases.Delete(r.Context(), session(r).OwnerID, r.PathValue("id")); err != nil {
		d.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/app/phrases?done=deleted", http.StatusSeeOther)
}
