package dashboard

import (
	"context"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// WindowService previews a phrase, or a change of its filters, on the
// owner's recent posts and matches, and applies a phrase's filters to
// its matches. app.Window is one.
type WindowService interface {
	Bounds() (days, posts int)
	Preview(ctx context.Context, ownerID, phrase, platform, community string, f core.PhraseFilters) (ports.Preview, error)
	PreviewChange(ctx context.Context, ownerID, phraseID string, ch core.PhraseFiltersChange) (ports.Preview, error)
	ApplyFilters(ctx context.Context, ownerID, phraseID string) (ports.Applied, error)
	LastApplied(ctx context.Context, ownerID, phraseID string) (core.ArchiveSet, error)
	UndoApply(ctx context.Context, ownerID, phraseID, setID string) (int, error)
}

// previewView is what a preview shows: what the phrase would have found
// in the window and, for an existing phrase, what its filters drop.
type previewView struct {
	On       bool
	Days     int
	Count    int
	Read     int
	Partial  bool
	Posts    []previewPostView
	Existing bool
	Dropped  previewDroppedView
}

type previewDroppedView struct {
	Count      int
	Read       int
	Partial    bool
	Archivable int
	Posts      []previewPostView
}

// previewPostView is a post a preview shows, the phrase marked in its
// title and text.
type previewPostView struct {
	Title, Text template.HTML
	Author      string
	Platform    string
	Community   string
	URL         string
	When        string // when it was seen, or matched
	WhenISO     string
}

func (d *Dashboard) previewOf(p ports.Preview) *previewView {
	v := &previewView{On: p.Days > 0, Days: p.Days, Count: p.Window.Count, Read: p.Window.Read, Partial: p.Window.Partial,
		Existing: p.Existing}
	for _, rp := range p.Window.First {
		v.Posts = append(v.Posts, d.previewPost(p.Phrase.Phrase, rp.Post, rp.Platform, rp.Community, rp.SeenAt))
	}
	if p.Existing {
		v.Dropped = previewDroppedView{Count: p.Dropped.Count, Read: p.Dropped.Read, Partial: p.Dropped.Partial, Archivable: p.Archivable}
		for _, m := range p.Dropped.First {
			v.Dropped.Posts = append(v.Dropped.Posts, d.previewPost(p.Phrase.Phrase, m.Post, m.Platform, p.Phrase.Community, m.CreatedAt))
		}
	}
	return v
}

func (d *Dashboard) previewPost(phrase string, p core.Post, platform core.Platform, community string, at time.Time) previewPostView {
	return previewPostView{Title: markPhrase(p.Title, phrase), Text: markPhrase(p.Text, phrase), Author: p.Author,
		Platform: string(platform), Community: community, URL: safeURL(p.URL), When: ago(d.cfg.Now(), at), WhenISO: at.UTC().Format(time.RFC3339)}
}

// previewPhrase shows, under the add form as it was filled in, what the
// phrase would have matched in the owner's recent posts: the same checks
// as adding it, a refusal beside its field, and nothing stored.
func (d *Dashboard) previewPhrase(w http.ResponseWriter, r *http.Request, f phraseForm) {
	filters, err := f.Filters.filters()
	var pv ports.Preview
	if err == nil {
		pv, err = d.deps.Window.Preview(r.Context(), session(r).OwnerID, f.Phrase, f.Platform, f.Community, filters)
	}
	if err != nil {
		if statusOf(err) == http.StatusInternalServerError {
			d.fail(w, r, err)
			return
		}
		d.renderPhrases(w, r, statusOf(err), f, map[string]string{f.field(err): core.Message(err)}, "", nil)
		return
	}
	d.renderPhrases(w, r, http.StatusOK, f, nil, "", d.previewOf(pv))
}

// previewFilters shows, under the filters form as it was filled in, what
// the phrase would match with those filters and which of its matches
// they drop; nothing is saved.
func (d *Dashboard) previewFilters(w http.ResponseWriter, r *http.Request, f filtersForm) {
	owner, id := session(r).OwnerID, r.PathValue("id")
	filters, err := f.filters()
	var pv ports.Preview
	if err == nil {
		pv, err = d.deps.Window.PreviewChange(r.Context(), owner, id, core.ChangeAll(filters))
	}
	p, gerr := d.deps.Phrases.Get(r.Context(), owner, id)
	if gerr != nil {
		d.fail(w, r, gerr)
		return
	}
	if err != nil {
		name := filterField(err)
		if name == "" {
			d.fail(w, r, err)
			return
		}
		d.renderFilters(w, r, statusOf(err), p, f, map[string]string{name: core.Message(err)}, nil)
		return
	}
	d.renderFilters(w, r, http.StatusOK, p, f, nil, d.previewOf(pv))
}

// applyView is the filters page's offer to archive the matches the
// phrase's filters, as saved, drop, and to undo the last time it did.
type applyView struct {
	// Filtered: the phrase has filters, so the card can say what they
	// skip; without, it only offers to undo an earlier application.
	Filtered   bool
	Archivable int
	Partial    bool
	Last       *core.ArchiveSet
	LastWhen   string
}

// applyOffer reads what the phrase's saved filters drop of its matches
// and its last set archived by applying them; nil when there is nothing
// to say: no filters, and no application to undo.
func (d *Dashboard) applyOffer(ctx context.Context, owner string, p core.Phrase) (*applyView, error) {
	if d.deps.Window == nil {
		return nil, nil
	}
	v := &applyView{Filtered: !p.Filters.IsZero()}
	if v.Filtered {
		pv, err := d.deps.Window.PreviewChange(ctx, owner, p.ID, core.PhraseFiltersChange{})
		if err != nil {
			return nil, err
		}
		v.Archivable, v.Partial = pv.Archivable, pv.Dropped.Partial
	}
	last, err := d.deps.Window.LastApplied(ctx, owner, p.ID)
	switch {
	case err == nil:
		v.Last, v.LastWhen = &last, ago(d.cfg.Now(), last.CreatedAt)
	case !core.IsKind(err, core.KindNotFound):
		return nil, err
	case !v.Filtered:
		return nil, nil
	}
	return v, nil
}

// applyFilters archives, in one step, the phrase's matches its filters
// drop, and comes back to the filters page, which offers to undo it.
func (d *Dashboard) applyFilters(w http.ResponseWriter, r *http.Request) {
	if d.deps.Window == nil {
		d.notFound(w, r)
		return
	}
	id := r.PathValue("id")
	a, err := d.deps.Window.ApplyFilters(r.Context(), session(r).OwnerID, id)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	done := "applied"
	switch {
	case a.Set.Matches == 0:
		done = "appliednone"
	case a.Partial:
		// Older matches were left unread: the notice says how many of
		// the newest were judged, not that all the filters skip are gone.
		done = "appliednewest&n=" + strconv.Itoa(a.Read)
	}
	http.Redirect(w, r, "/app/phrases/"+id+"/filters?done="+done, http.StatusSeeOther)
}

// undoApply restores the matches the last application archived.
func (d *Dashboard) undoApply(w http.ResponseWriter, r *http.Request) {
	if d.deps.Window == nil {
		d.notFound(w, r)
		return
	}
	id := r.PathValue("id")
	if _, err := d.deps.Window.UndoApply(r.Context(), session(r).OwnerID, id, r.PathValue("set")); err != nil {
		d.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/app/phrases/"+id+"/filters?done=restored", http.StatusSeeOther)
}

// markPhrase returns text as HTML with every place the phrase occurs in
// <mark>, found by the matcher's rules (phraseSpans); of places that
// overlap, the first is marked. Each piece of the text is escaped on its
// own and only <mark> and </mark> go between the pieces, so a stranger's
// markup stays text.
func markPhrase(text, phrase string) template.HTML {
	text = strings.ToValidUTF8(text, "\uFFFD")
	var kept [][2]int
	for _, s := range phraseSpans(text, phrase) {
		if len(kept) == 0 || s[0] >= kept[len(kept)-1][1] {
			kept = append(kept, s)
		}
	}
	return marked(text, kept)
}
