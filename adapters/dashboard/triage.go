package dashboard

import (
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// triageMatch runs the action a match's form names: each match has one
// form whose buttons name their action, which keeps a page of 25
// matches small.
func (d *Dashboard) triageMatch(w http.ResponseWriter, r *http.Request) {
	form, err := readForm(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	h, ok := map[string]http.HandlerFunc{
		"read": d.markRead, "unread": d.markUnread, "star": d.star,
		"unstar": d.unstar, "archive": d.archive, "unarchive": d.unarchive,
	}[form.Get("action")]
	if !ok {
		d.fail(w, r, core.Errorf(core.KindInvalid, "choose an action: read, unread, star, unstar, archive or unarchive"))
		return
	}
	h(w, r)
}

func (d *Dashboard) markRead(w http.ResponseWriter, r *http.Request)   { d.triageOne(w, r, "read") }
func (d *Dashboard) markUnread(w http.ResponseWriter, r *http.Request) { d.triageOne(w, r, "unread") }
func (d *Dashboard) star(w http.ResponseWriter, r *http.Request)       { d.triageOne(w, r, "star") }
func (d *Dashboard) unstar(w http.ResponseWriter, r *http.Request)     { d.triageOne(w, r, "unstar") }
func (d *Dashboard) archive(w http.ResponseWriter, r *http.Request)    { d.triageOne(w, r, "archive") }
func (d *Dashboard) unarchive(w http.ResponseWriter, r *http.Request)  { d.triageOne(w, r, "unarchive") }

// fragmentHeader marks a request of the page's script, which wants the
// match's new markup rather than a redirect.
const fragmentHeader = "X-Earshot-Fragment"

// triageOne applies one action to one match, then goes back to the page
// the form was on; the page's script gets the match's new markup instead.
func (d *Dashboard) triageOne(w http.ResponseWriter, r *http.Request, action string) {
	ctx := r.Context()
	owner := session(r).OwnerID
	c, _ := triageChange(action)
	id := r.PathValue("id")
	ret := refererReturn(r)
	tr, err := d.deps.Inbox.Set(ctx, owner, id, c)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	if r.Header.Get(fragmentHeader) != "1" {
		http.Redirect(w, r, ret, http.StatusSeeOther)
		return
	}
	m, err := d.deps.Matches.Get(ctx, owner, id)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	// The page the form was on marks its search: so does its new markup.
	var search core.Search
	if u, err := url.Parse(ret); err == nil {
		search = parseFilter(u.Query()).search()
	}
	h, err := d.matchHTML(ctx, owner, ports.InboxItem{Match: m, Triage: tr}, d.cfg.Now(), search)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = io.WriteString(w, string(h))
}

// triageBulk applies one action to the selected matches and goes back
// to the page, saying what was done.
func (d *Dashboard) triageBulk(w http.ResponseWriter, r *http.Request) {
	form, err := readForm(r)
	var f bulkForm
	if err == nil {
		f, err = parseBulk(form)
	}
	var n int
	if err == nil {
		n, err = d.deps.Inbox.SetMany(r.Context(), session(r).OwnerID, f.IDs, f.Change)
	}
	if _, ok := triageChange(f.Action); ok && len(f.IDs) == 0 {
		// A button pressed before ticking a match: back to the view the
		// owner was on, its filters and page kept, which says so.
		http.Redirect(w, r, withDone(f.Return, url.Values{"done": {nothingSelected}}), http.StatusSeeOther)
		return
	}
	if err != nil {
		d.fail(w, r, err)
		return
	}
	// n counts the owner's matches the action reached: an id that is
	// unknown or another owner's is not one of them.
	http.Redirect(w, r, withNotice(f.Return, f.Action, n), http.StatusSeeOther)
}

// nothingSelected is the done= of a bulk action refused because no
// match was ticked.
const nothingSelected = "none"

// withNotice adds the bulk action done to a return address; the page
// words the notice itself, so the address cannot make it say anything
// else.
func withNotice(ret, action string, n int) string {
	return withDone(ret, url.Values{"done": {action}, "n": {strconv.Itoa(n)}})
}

// withDone sets what the bulk form did on a return address.
func withDone(ret string, done url.Values) string {
	u, err := url.Parse(ret)
	if err != nil {
		return ret
	}
	q := u.Query()
	q.Del("n")
	for k, v := range done {
		q[k] = v
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// bulkProblem words a bulk action refused on the way back to the inbox.
func bulkProblem(q url.Values) string {
	if q.Get("done") == nothingSelected {
		return "Nothing was changed: select at least one match first."
	}
	return ""
}

// bulkNotice words what a bulk action did.
func bulkNotice(q url.Values) string {
	action := q.Get("done")
	if _, ok := triageChange(action); !ok {
		return ""
	}
	n, err := strconv.Atoi(q.Get("n"))
	if err != nil || n < 0 || n > core.MaxTriageBatch {
		return ""
	}
	what := map[string]string{"read": "marked read", "unread": "marked unread", "star": "starred",
		"unstar": "unstarred", "archive": "archived", "unarchive": "moved back to the inbox"}[action]
	noun := "matches"
	if n == 1 {
		noun = "match"
	}
	return strings.Join([]string{strconv.Itoa(n), noun, what + "."}, " ")
}
