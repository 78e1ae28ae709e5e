package dashboard

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
)

// The fakes have room for webhooks.
func (c *countingWebhooks) Gate(context.Context) error { return nil }

// downgradeWorld is the dashboard over the real services with the
// Free plan's limits, on a database where owner a made a webhook and a
// Slack channel while the limit was 2; owner b has none.
type downgradeWorld struct {
	*rowWorld
	hook, ch core.Webhook
}

func newDowngradeWorld(t *testing.T) *downgradeWorld {
	t.Helper()
	w := &downgradeWorld{rowWorld: newRowWorldWith(t, core.FreeLimits)}
	// a's rows, made while the limit was 2.
	pro := &rowWorld{}
	pro.hooks, pro.channels = w.services(core.Limits{WebhooksPerPerson: 2})
	w.hook, w.ch = pro.add(t, w.a)
	return w
}

// After the operator lowers the webhook limit to 0, the webhooks page
// of an owner who has a webhook and a channel shows the Pro note instead
// of the add forms, and the rows with their switch and deletion; their
// pages offer the switch, the settings and the deletion, and neither the
// test, the rotation nor the replay. The switch and the deletion work.
// An owner with none sees the Pro note alone, as on a Free plan from the
// start.
func TestWebhooksPageAfterDowngrade(t *testing.T) {
	w := newDowngradeWorld(t)
	hookPage, chanPage := "/app/webhooks/"+w.hook.ID, "/app/channels/"+w.ch.ID

	has := func(what, body string, want []string, not []string) {
		t.Helper()
		for _, s := range want {
			if !strings.Contains(body, s) {
				t.Errorf("%s lacks %q", what, s)
			}
		}
		for _, s := range not {
			if strings.Contains(body, s) {
				t.Errorf("%s has %q", what, s)
			}
		}
	}
	addForms := []string{`action="/app/webhooks" class="add"`, "Add a channel", `id="add-slack"`}

	list := getAs(w.d, "a", "/app/webhooks")
	if list.Code != http.StatusOK {
		t.Fatalf("the list with a webhook and a channel left: %d", list.Code)
	}
	has("the list with rows left", list.Body.String(),
		[]string{"Webhooks are a Pro feature", `id="kept"`, `data-id="` + w.hook.ID + `"`, `data-id="` + w.ch.ID + `"`,
			`action="` + hookPage + `/active"`, `action="` + chanPage + `/active"`,
			`action="` + hookPage + `/delete"`, `action="` + chanPage + `/delete"`, "Switch off"},
		append([]string{`/test"`, rowSlackSecret}, addForms...))

	none := getAs(w.d, "b", "/app/webhooks")
	if none.Code != http.StatusOK {
		t.Fatalf("the list of an owner with none: %d", none.Code)
	}
	has("the list of an owner with none", none.Body.String(), []string{"Webhooks are a Pro feature"},
		append([]string{`id="destinations"`, `id="kept"`, "No webhooks or channels yet"}, addForms...))
	if rec := postAs(w.d, "b", "/app/webhooks", "url=https%3A%2F%2Fhooks.example.com%2Fb"); rec.Code != http.StatusForbidden ||
		!strings.Contains(rec.Body.String(), "Webhooks are a Pro feature") {
		t.Fatalf("an add by an owner with none: %d", rec.Code)
	}
	if rec := postAs(w.d, "a", "/app/webhooks", "url=https%3A%2F%2Fhooks.example.com%2Fa2"); rec.Code != http.StatusForbidden ||
		!strings.Contains(rec.Body.String(), `data-id="`+w.hook.ID+`"`) {
		t.Fatalf("an add by an owner with rows left: %d, want 403 and the list", rec.Code)
	}

	for page, body := range map[string]string{hookPage: getAs(w.d, "a", hookPage).Body.String(), chanPage: getAs(w.d, "a", chanPage).Body.String()} {
		has(page, body, []string{`id="switch"`, `id="delete"`, `id="gated"`, "Save settings"},
			[]string{`id="test"`, `id="rotate"`, `id="replay"`})
	}

	for _, page := range []string{hookPage, chanPage} {
		if rec := postAs(w.d, "a", page+"/active", "active=false"); rec.Code != http.StatusSeeOther {
			t.Fatalf("switching %s off: %d %s", page, rec.Code, rec.Body)
		}
		if rec := postAs(w.d, "a", page+"/test", ""); rec.Code != http.StatusForbidden {
			t.Fatalf("testing %s: %d, want 403", page, rec.Code)
		}
	}
	all, err := w.channels.All(context.Background(), w.a)
	if err != nil || len(all) != 2 || all[0].Active || all[1].Active {
		t.Fatalf("after switching both off: %+v, %v", all, err)
	}

	for _, page := range []string{hookPage, chanPage} {
		if rec := getAs(w.d, "a", page+"/delete"); rec.Code != http.StatusOK {
			t.Fatalf("the deletion's confirmation of %s: %d", page, rec.Code)
		}
		if rec := postAs(w.d, "a", page+"/delete", ""); rec.Code != http.StatusSeeOther {
			t.Fatalf("deleting %s: %d %s", page, rec.Code, rec.Body)
		}
	}
	if _, err := w.channels.All(context.Background(), w.a); !core.IsKind(err, core.KindPlanLimit) {
		t.Fatalf("with both deleted: %v, want none left", err)
	}
	has("the list with none left", getAs(w.d, "a", "/app/webhooks").Body.String(), []string{"Webhooks are a Pro feature"},
		[]string{`id="destinations"`, `id="kept"`})
}
