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
	Full  bool   // no room for one more
	None  bool   // the plan has none of it
	Why   string // when full: the refusal one more would get, in its words
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
	// Each meter asks core's check whether one more fits, so a full
	// meter says what the refusal of one more would say.
	mk := func(label, of string, used, limit int, refusal error) meter {
		m := meter{Label: label, Of: of, Used: used, Limit: limit, Full: refusal != nil, None: limit <= 0}
		if refusal != nil {
			m.Why = core.Message(refusal)
		}
		return m
	}
	v := planView{layout: layout{Title: "Plan and usage", Nav: "plan", SignedIn: true}, Plan: p.Name}
	for _, pl := range core.Platforms {
		v.Phrases = append(v.Phrases, mk(string(pl), "phrases", p.Usage.Phrases[pl], p.Limits.PhrasesPerPlatform,
			p.Limits.CheckNewPhrase(p.Usage, pl)))
		v.Accounts = append(v.Accounts, mk(string(pl), "accounts", p.Usage.Accounts[pl], p.Limits.AccountsPerPlatform,
			p.Limits.CheckNewAccount(p.Usage, pl)))
	}
	v.Webhooks = mk("webhooks and channels", "", p.Usage.Webhooks, p.Limits.WebhooksPerPerson, p.Limits.CheckNewWebhook(p.Usage))
	d.render(w, r, http.StatusOK, "plan", &v)
}
