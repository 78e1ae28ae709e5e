package dashboard

import (
	"net/http"

	"github.com/earshothq/earshot/core"
)

// meter is one usage against one limit.
type meter struct {
	Label string
	Of    string // what is counted, said to screen readers; the heading says it to the eye
	Used  int
	Limit int
	Full  bool // no room for one more
	None  bool // the plan has none of it
}

type planView struct {
	layout
	Plan     string
	Phrases  []meter
	Accounts []meter
	Webhooks meter
}

// showPlan shows what GET /me says, as meters.
func (d *Dashboard) showPlan(w http.ResponseWriter, r *http.Request) {
	p, err := d.deps.Phrases.Plan(r.Context(), session(r).OwnerID)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	mk := func(label, of string, used, limit int) meter {
		return meter{Label: label, Of: of, Used: used, Limit: limit, Full: used >= limit, None: limit <= 0}
	}
	v := planView{layout: layout{Title: "Plan and usage", Nav: "plan", SignedIn: true}, Plan: p.Name}
	for _, pl := range core.Platforms {
		v.Phrases = append(v.Phrases, mk(string(pl), "phrases", p.Usage.Phrases[pl], p.Limits.PhrasesPerPlatform))
		v.Accounts = append(v.Accounts, mk(string(pl), "accounts", p.Usage.Accounts[pl], p.Limits.AccountsPerPlatform))
	}
	v.Webhooks = mk("webhooks", "", p.Usage.Webhooks, p.Limits.WebhooksPerPerson)
	d.render(w, r, http.StatusOK, "plan", &v)
}
